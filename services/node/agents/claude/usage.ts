import type { JsonRecord } from "../log-follower.js";
import { arrayField, objectField, objects, stringField } from "../record-fields.js";
import { tableContextWindow } from "../usage/context-windows.js";
import type { TotalsReducer } from "../usage/totals-follower.js";
import { countField, EMPTY_USAGE, type LimitReached, recordTime, type UsageReading } from "../usage/usage.js";
import { isRealPrompt } from "./transcript.js";

/**
 * API responses remembered for deduplication: Claude Code writes one `assistant` line per content
 * block, each with the response's usage, and the lines of one response are adjacent, so only the
 * newest few need remembering.
 */
const RECENT_RESPONSES = 64;
/** The model Claude Code names its own error lines with: not a model that answered. */
const SYNTHETIC_MODEL = "<synthetic>";
/**
 * A plan limit in an error line or on screen (2.1.x: "You've hit your session limit · resets 3pm";
 * the reset part is absent when unknown).
 */
const LIMIT_HIT = /You['’]ve hit your ([^·\n]*?limit)\b(?:[^·\n]*?·\s*resets ([^·\n]+?))?\s*(?:·|$)/m;
/** Older builds' error text: "Claude AI usage limit reached|<reset, seconds since the epoch>". */
const LEGACY_LIMIT = /usage limit reached\|(\d{9,11})/;
/** The error line's `apiError` for a hit plan limit (2.1.332 with a claude.ai login, seen in `make compat`). */
const PLAN_LIMIT_ERROR = "usage_limit_reached";
/** Seconds since the epoch below this are not a reset time (a malformed or relative value). */
const MIN_EPOCH_S = 1e9;

/** The usage one API response recorded (counted once however many lines carry it). */
interface ResponseUsage {
  readonly input: number;
  readonly cached: number;
  readonly output: number;
}

/** What the follower keeps per transcript; mutated in place by the reducer (the follower owns it). */
export interface ClaudeUsageState {
  model: string;
  contextTokens: number;
  totalInput: number;
  totalCached: number;
  totalOutput: number;
  lastTurnTokens: number;
  updatedAtMs: number;
  limit: LimitReached | undefined;
  /** The newest responses' counted usage, by `message.id` and request. */
  readonly recent: Map<string, ResponseUsage>;
  /** Keys counted in the newest turn (so a response split over the prompt boundary is not lost). */
  records: number;
}

function responseUsage(usage: JsonRecord | undefined): ResponseUsage {
  const cached = countField(usage, "cache_creation_input_tokens") + countField(usage, "cache_read_input_tokens");
  return { input: countField(usage, "input_tokens") + cached, cached, output: countField(usage, "output_tokens") };
}

/** The text blocks of an assistant line, joined. */
function assistantText(message: JsonRecord | undefined): string {
  return objects(arrayField(message, "content"))
    .filter((b) => b.type === "text")
    .map((b) => stringField(b, "text"))
    .join("\n");
}

/** The plan limit a Claude Code error line or screen names, if any. */
export function claudeLimitReached(text: string): LimitReached | undefined {
  const legacy = LEGACY_LIMIT.exec(text);
  if (legacy) return { resetsAtMs: Number(legacy[1]) * 1000, resetsText: "" };
  const hit = LIMIT_HIT.exec(text);
  if (!hit) return undefined;
  return { resetsAtMs: 0, resetsText: (hit[2] ?? "").trim() };
}

/**
 * The plan limit an error line records: its text, or `apiError: "usage_limit_reached"`, with the reset
 * time from `quotaLimits.resetsAt` (or `apiErrorParams.rate_limit_info.resetsAt`, seconds) where 2.1.332
 * writes it. An API-key login's 429 ("API Error: Request rejected (429)") has neither: not a plan limit.
 */
function errorLineLimit(record: JsonRecord, message: JsonRecord | undefined): LimitReached | undefined {
  const said = claudeLimitReached(assistantText(message));
  if (!said && record.apiError !== PLAN_LIMIT_ERROR) return undefined;
  const info =
    objectField(record, "quotaLimits") ?? objectField(objectField(record, "apiErrorParams"), "rate_limit_info");
  const resetsAtS = info?.resetsAt;
  const fromLog =
    typeof resetsAtS === "number" && Number.isFinite(resetsAtS) && resetsAtS > MIN_EPOCH_S ? resetsAtS * 1000 : 0;
  return { resetsAtMs: said?.resetsAtMs || fromLog, resetsText: said?.resetsText ?? "" };
}

/**
 * Claude Code's transcript usage (docs/status.md, "Usage and limits"): each assistant line carries
 * `message.model` and `message.usage`; lines of one response share `message.id` (and `requestId`,
 * `requestRef` in 2.1.332) and are counted once, keeping the largest usage seen. The context is the
 * newest response's input with cache creation and cache read; the last turn is every response since
 * the newest real prompt. Sidechains (subagents) are not the session's own conversation.
 */
export const claudeUsageReducer: TotalsReducer<ClaudeUsageState> = {
  initial: () => ({
    model: "",
    contextTokens: 0,
    totalInput: 0,
    totalCached: 0,
    totalOutput: 0,
    lastTurnTokens: 0,
    updatedAtMs: 0,
    limit: undefined,
    recent: new Map(),
    records: 0,
  }),
  enough() {
    let replied = false;
    return (record) => {
      if (record.isSidechain === true) return false;
      if (replied && isRealPrompt(record)) return true;
      const message = objectField(record, "message");
      if (
        record.type === "assistant" &&
        objectField(message, "usage") &&
        stringField(message, "model") !== SYNTHETIC_MODEL
      )
        replied = true;
      return false;
    };
  },
  apply(state, record) {
    if (record.isSidechain === true) return state;
    if (isRealPrompt(record)) {
      state.lastTurnTokens = 0;
      return state;
    }
    if (record.type !== "assistant") return state;
    const message = objectField(record, "message");
    const model = stringField(message, "model");
    if (record.isApiErrorMessage === true || model === SYNTHETIC_MODEL) {
      state.limit = errorLineLimit(record, message) ?? state.limit;
      return state;
    }
    const usage = objectField(message, "usage");
    if (!usage) return state;
    const request = stringField(record, "requestId") || stringField(record, "requestRef");
    const key = `${stringField(message, "id")}\0${request}`;
    const now = responseUsage(usage);
    const before = state.recent.get(key);
    const counted = before && before.input + before.output >= now.input + now.output ? before : now;
    if (counted !== before) {
      const old = before ?? { input: 0, cached: 0, output: 0 };
      state.totalInput += counted.input - old.input;
      state.totalCached += counted.cached - old.cached;
      state.totalOutput += counted.output - old.output;
      state.lastTurnTokens += counted.input + counted.output - old.input - old.output;
      state.recent.delete(key);
      state.recent.set(key, counted);
      if (state.recent.size > RECENT_RESPONSES) {
        const oldest = state.recent.keys().next().value;
        if (oldest !== undefined) state.recent.delete(oldest);
      }
    }
    if (model) state.model = model;
    state.contextTokens = counted.input;
    state.updatedAtMs = recordTime(record) || state.updatedAtMs;
    // A reply after an error: the limit no longer holds.
    state.limit = undefined;
    state.records += 1;
    return state;
  },
};

/**
 * The usage reading of a transcript's state; undefined before the first reply. `complete` false: the
 * state holds the newest turn only (a long transcript's totals are still being counted), so the
 * totals are reported pending rather than as that turn's.
 */
export function claudeUsage(
  state: ClaudeUsageState,
  screenLimit?: LimitReached,
  complete = true,
): UsageReading | undefined {
  // The screen's words with the log's exact reset time, where both say so.
  const limit = screenLimit
    ? { ...screenLimit, resetsAtMs: screenLimit.resetsAtMs || state.limit?.resetsAtMs || 0 }
    : state.limit;
  if (state.records === 0 && !limit) return undefined;
  const window = tableContextWindow(state.model);
  const totals = complete
    ? { totalInputTokens: state.totalInput, totalOutputTokens: state.totalOutput, totalCachedTokens: state.totalCached }
    : { totalInputTokens: 0, totalOutputTokens: 0, totalCachedTokens: 0, totalsPending: true };
  return {
    ...EMPTY_USAGE,
    model: state.model,
    contextTokens: state.contextTokens,
    contextWindow: window,
    contextWindowSource: window > 0 ? "table" : "none",
    ...totals,
    lastTurnTokens: state.lastTurnTokens,
    limitReached: limit,
    updatedAtMs: state.updatedAtMs,
  };
}
