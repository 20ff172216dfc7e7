import type { JsonRecord } from "../log-follower.js";
import { objectField, stringField } from "../record-fields.js";
import type { RecentUsageReducer } from "../usage/recent-follower.js";
import {
  countField,
  EMPTY_USAGE,
  type LimitReached,
  type RateLimitReading,
  recordTime,
  type UsageReading,
} from "../usage/usage.js";

/** Window lengths Codex reports, in minutes, and the names people know them by. */
const WINDOW_NAMES: ReadonlyMap<number, string> = new Map([
  [300, "5h"],
  [10_080, "weekly"],
]);
/** The screen's words when the plan's limit is hit (0.171: "You’ve hit your usage limit. … Try again at 3:00 PM."). */
const LIMIT_HIT = /You['’]ve hit your usage limit/;
const TRY_AGAIN = /try again at ([^.\n]+?)\.?\s*$/im;
/** `codex_error_info` of a turn refused because the plan's limit was hit (0.171.0). */
const USAGE_LIMIT_ERROR = "usage_limit_exceeded";

/** The newest usage of a Codex rollout. */
export interface CodexUsageState {
  readonly model: string;
  readonly effort: string;
  readonly hasTokens: boolean;
  readonly total: JsonRecord | undefined;
  readonly last: JsonRecord | undefined;
  readonly contextWindow: number;
  readonly lastTurnTokens: number;
  readonly rateLimits: readonly RateLimitReading[];
  readonly limit: LimitReached | undefined;
  readonly updatedAtMs: number;
}

const INITIAL: CodexUsageState = {
  model: "",
  effort: "",
  hasTokens: false,
  total: undefined,
  last: undefined,
  contextWindow: 0,
  lastTurnTokens: 0,
  rateLimits: [],
  limit: undefined,
  updatedAtMs: 0,
};

function windowName(key: string, minutes: number): string {
  return WINDOW_NAMES.get(minutes) ?? (minutes > 0 ? `${minutes}m` : key);
}

/** One rate-limit window (`used_percent`, `window_minutes`, `resets_at` in seconds or `resets_in_seconds`). */
function rateLimit(key: string, window: JsonRecord | undefined, at: number): RateLimitReading | undefined {
  if (!window) return undefined;
  const minutes = countField(window, "window_minutes");
  const resetsAt = countField(window, "resets_at");
  const resetsIn = countField(window, "resets_in_seconds");
  const resetsAtMs = resetsAt > 0 ? resetsAt * 1000 : resetsIn > 0 && at > 0 ? at + resetsIn * 1000 : 0;
  return {
    name: windowName(key, minutes),
    usedPercent: countField(window, "used_percent"),
    resetsAtMs,
    windowMinutes: minutes,
  };
}

/**
 * The limit a `rate_limits` object says was reached (`rate_limit_reached_type` set), with the reset of
 * the window it names, else of the fullest window.
 */
function reachedLimit(
  limits: JsonRecord,
  windows: readonly (readonly [string, RateLimitReading])[],
): LimitReached | undefined {
  const reached = limits.rate_limit_reached_type;
  if (reached === null || reached === undefined || reached === false || reached === "") return undefined;
  const named = typeof reached === "string" ? windows.find(([key]) => reached.includes(key))?.[1] : undefined;
  const fullest = windows.map(([, r]) => r).sort((x, y) => y.usedPercent - x.usedPercent)[0];
  return { resetsAtMs: (named ?? fullest)?.resetsAtMs ?? 0, resetsText: "" };
}

/** The limit the Codex screen (or an error event's message) says was hit, if any. */
export function codexLimitReached(text: string): LimitReached | undefined {
  if (!LIMIT_HIT.test(text)) return undefined;
  return { resetsAtMs: 0, resetsText: TRY_AGAIN.exec(text)?.[1]?.trim() ?? "" };
}

function applyTokenCount(state: CodexUsageState, record: JsonRecord, payload: JsonRecord): CodexUsageState {
  const at = recordTime(record);
  let next = state;
  const info = objectField(payload, "info");
  if (info) {
    const last = objectField(info, "last_token_usage");
    next = {
      ...next,
      hasTokens: true,
      total: objectField(info, "total_token_usage") ?? next.total,
      last: last ?? next.last,
      contextWindow: countField(info, "model_context_window") || next.contextWindow,
      lastTurnTokens: next.lastTurnTokens + countField(last, "total_tokens"),
      updatedAtMs: at || next.updatedAtMs,
    };
  }
  const limits = objectField(payload, "rate_limits");
  if (limits) {
    const windows: [string, RateLimitReading][] = [];
    for (const key of ["primary", "secondary"]) {
      const reading = rateLimit(key, objectField(limits, key), at);
      if (reading) windows.push([key, reading]);
    }
    next = { ...next, rateLimits: windows.map(([, r]) => r), limit: reachedLimit(limits, windows) };
  }
  return next;
}

/**
 * Codex's rollout usage (docs/status.md, "Usage and limits"): `token_count` events carry the cumulative
 * `total_token_usage`, the newest request's `last_token_usage`, `model_context_window` and the plan's
 * `rate_limits`; `turn_context` carries the model and reasoning effort. The backward walk needs the
 * newest turn's `turn_context` and the newest `token_count` with figures (older than that turn's
 * start while its first request runs); the last turn is every `token_count` since that turn began.
 */
export const codexUsageReducer: RecentUsageReducer<CodexUsageState> = {
  initial: () => INITIAL,
  enough() {
    let turn = false;
    let tokens = false;
    return (record) => {
      const payload = objectField(record, "payload");
      if (record.type === "turn_context") turn = true;
      if (
        record.type === "event_msg" &&
        stringField(payload, "type") === "token_count" &&
        objectField(payload, "info")
      ) {
        tokens = true;
      }
      return turn && tokens;
    };
  },
  apply(state, record) {
    const payload = objectField(record, "payload");
    if (record.type === "turn_context") {
      const settings = objectField(objectField(payload, "collaboration_mode"), "settings");
      return {
        ...state,
        model: stringField(payload, "model") || stringField(settings, "model") || state.model,
        effort: stringField(payload, "effort") || stringField(settings, "reasoning_effort"),
        lastTurnTokens: 0,
      };
    }
    if (record.type !== "event_msg") return state;
    const type = stringField(payload, "type");
    if (type === "token_count" && payload) return applyTokenCount(state, record, payload);
    if (type === "error") {
      const limit = codexLimitReached(stringField(payload, "message"));
      return limit ? { ...state, limit } : state;
    }
    // 0.171.0 ends a refused turn with the error in `task_complete` (compat: a hit plan limit).
    if (type === "task_complete") {
      const error = objectField(payload, "error");
      const message = stringField(error, "message");
      const limit =
        codexLimitReached(message) ??
        (stringField(error, "codex_error_info") === USAGE_LIMIT_ERROR
          ? { resetsAtMs: 0, resetsText: TRY_AGAIN.exec(message)?.[1]?.trim() ?? "" }
          : undefined);
      return limit ? { ...state, limit } : state;
    }
    return state;
  },
};

/** The usage reading of a rollout's state; undefined before its first `token_count`. */
export function codexUsage(state: CodexUsageState, screenLimit?: LimitReached): UsageReading | undefined {
  const limit = state.limit ?? screenLimit;
  if (!state.hasTokens && state.rateLimits.length === 0 && !limit) return undefined;
  const total = state.total;
  const last = state.last;
  return {
    ...EMPTY_USAGE,
    model: state.model,
    reasoningEffort: state.effort,
    contextTokens: countField(last, "input_tokens"),
    contextWindow: state.contextWindow,
    contextWindowSource: state.contextWindow > 0 ? "log" : "none",
    totalInputTokens: countField(total, "input_tokens"),
    totalOutputTokens: countField(total, "output_tokens"),
    totalCachedTokens: countField(total, "cached_input_tokens") + countField(total, "cache_write_input_tokens"),
    totalReasoningTokens: countField(total, "reasoning_output_tokens"),
    lastTurnTokens: state.lastTurnTokens,
    rateLimits: state.rateLimits,
    limitReached: limit,
    updatedAtMs: state.updatedAtMs,
  };
}
