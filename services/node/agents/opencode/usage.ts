import type Database from "better-sqlite3";
import { parseRecord } from "../log-follower.js";
import { objectField, stringField } from "../record-fields.js";
import { tableContextWindow } from "../usage/context-windows.js";
import { countField, EMPTY_USAGE, type UsageReading } from "../usage/usage.js";
import { JSON_DATA, prepared } from "./statements.js";

/** The sums opencode's assistant messages give (tokens as it records them, cost in US dollars). */
interface Sums {
  readonly n: number;
  readonly input: number | null;
  readonly output: number | null;
  readonly reasoning: number | null;
  readonly cacheRead: number | null;
  readonly cacheWrite: number | null;
  readonly cost: number | null;
}

const SUMS = `SELECT count(*) AS n,
  sum(json_extract(${JSON_DATA}, '$.tokens.input')) AS input,
  sum(json_extract(${JSON_DATA}, '$.tokens.output')) AS output,
  sum(json_extract(${JSON_DATA}, '$.tokens.reasoning')) AS reasoning,
  sum(json_extract(${JSON_DATA}, '$.tokens.cache.read')) AS cacheRead,
  sum(json_extract(${JSON_DATA}, '$.tokens.cache.write')) AS cacheWrite,
  sum(json_extract(${JSON_DATA}, '$.cost')) AS cost
FROM message WHERE session_id = ? AND json_extract(${JSON_DATA}, '$.role') = 'assistant'`;

/**
 * The usage of opencode session `sessionId` (docs/status.md, "Usage and limits"): every assistant message
 * records its `tokens` (`input` without the cache, `output`, `reasoning`, `cache.read`, `cache.write`)
 * and its `cost`; the sums come from SQLite itself, the model and context from the newest assistant
 * message, the last turn from the messages answering the newest user message (`parentID`). opencode
 * records no context window: the pinned table gives it. Undefined before the first reply.
 */
export function queryUsage(db: Database.Database, sessionId: string): UsageReading | undefined {
  const sums = prepared(db, SUMS).get(sessionId) as Sums | undefined;
  if (!sums || sums.n === 0) return undefined;
  const newest = prepared(
    db,
    `SELECT data FROM message WHERE session_id = ? AND json_extract(${JSON_DATA}, '$.role') = 'assistant' ORDER BY time_created DESC, id DESC LIMIT 1`,
  ).get(sessionId) as { data: string } | undefined;
  const message = newest ? parseRecord(newest.data) : undefined;
  const tokens = objectField(message, "tokens");
  const cache = objectField(tokens, "cache");
  const parent = stringField(message, "parentID");
  const turn = parent
    ? (prepared(
        db,
        `SELECT sum(json_extract(${JSON_DATA}, '$.tokens.total')) AS total, sum(json_extract(${JSON_DATA}, '$.tokens.input') + json_extract(${JSON_DATA}, '$.tokens.output') + json_extract(${JSON_DATA}, '$.tokens.cache.read') + json_extract(${JSON_DATA}, '$.tokens.cache.write')) AS parts FROM message WHERE session_id = ? AND json_extract(${JSON_DATA}, '$.parentID') = ?`,
      ).get(sessionId, parent) as { total: number | null; parts: number | null } | undefined)
    : undefined;
  const model = stringField(message, "modelID");
  const window = tableContextWindow(model);
  const cached = (sums.cacheRead ?? 0) + (sums.cacheWrite ?? 0);
  const time = objectField(message, "time");
  const cost = typeof sums.cost === "number" && Number.isFinite(sums.cost) ? sums.cost : undefined;
  return {
    ...EMPTY_USAGE,
    model,
    contextTokens: countField(tokens, "input") + countField(cache, "read") + countField(cache, "write"),
    contextWindow: window,
    contextWindowSource: window > 0 ? "table" : "none",
    totalInputTokens: (sums.input ?? 0) + cached,
    totalOutputTokens: sums.output ?? 0,
    totalCachedTokens: cached,
    totalReasoningTokens: sums.reasoning ?? 0,
    lastTurnTokens: turn?.total ?? turn?.parts ?? 0,
    costUsd: cost,
    updatedAtMs: countField(time, "completed") || countField(time, "created"),
  };
}
