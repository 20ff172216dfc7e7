import { readFile, stat } from "node:fs/promises";
import { parseRecord } from "../log-follower.js";
import { objectField, stringField } from "../record-fields.js";
import { countField, EMPTY_USAGE, type UsageReading } from "../usage/usage.js";

/** Settings files remembered by path (one per watched session): the newest reading and its stamp. */
const MAX_REMEMBERED = 256;
const remembered = new Map<string, { stamp: string; usage: UsageReading | undefined }>();

/** The session's settings file beside its log: `<id>.settings.json`. */
export function droidSettingsPath(logPath: string): string {
  return `${logPath.slice(0, -".jsonl".length)}.settings.json`;
}

/**
 * Factory droid's usage (docs/status.md, "Usage and limits"): not in the session log but in the
 * session's `<id>.settings.json`, which droid rewrites after each model call: `model`,
 * `tokenUsage` (the session's sums: `inputTokens`, `outputTokens`, `cacheReadTokens`,
 * `thinkingTokens`) and `lastCallTokenUsage` (the newest call's). Read again only when it changed.
 */
export async function readDroidUsage(logPath: string): Promise<UsageReading | undefined> {
  const path = droidSettingsPath(logPath);
  const info = await stat(path).catch(() => undefined);
  if (!info?.isFile()) return undefined;
  const stamp = `${info.size}:${info.mtimeMs}`;
  const known = remembered.get(path);
  if (known?.stamp === stamp) return known.usage;
  const usage = droidUsage(await readFile(path, "utf8").catch(() => ""), info.mtimeMs);
  if (remembered.size >= MAX_REMEMBERED) remembered.delete(remembered.keys().next().value ?? "");
  remembered.set(path, { stamp, usage });
  return usage;
}

/** The reading of a settings file's text; undefined before the first model call or when unreadable. */
export function droidUsage(text: string, updatedAtMs: number): UsageReading | undefined {
  const settings = parseRecord(text);
  const totals = objectField(settings, "tokenUsage");
  const last = objectField(settings, "lastCallTokenUsage");
  if (!totals || countField(totals, "inputTokens") + countField(totals, "outputTokens") === 0) return undefined;
  return {
    ...EMPTY_USAGE,
    model: stringField(settings, "model"),
    reasoningEffort: stringField(settings, "reasoningEffort"),
    contextTokens: countField(last, "inputTokens"),
    totalInputTokens: countField(totals, "inputTokens"),
    totalOutputTokens: countField(totals, "outputTokens"),
    totalCachedTokens: countField(totals, "cacheReadTokens"),
    totalReasoningTokens: countField(totals, "thinkingTokens"),
    lastTurnTokens: countField(last, "inputTokens") + countField(last, "outputTokens"),
    updatedAtMs: Math.floor(updatedAtMs),
  };
}
