import type { JsonRecord } from "../log-follower.js";
import { objectField, stringField } from "../record-fields.js";
import type { TotalsReducer } from "../usage/totals-follower.js";
import { countField, EMPTY_USAGE, recordTime, type UsageReading } from "../usage/usage.js";
import { piMessage } from "./session-log.js";

/** The sums of a pi session's assistant messages (each carries its request's `usage`). */
export interface PiUsageState {
  readonly requests: number;
  readonly model: string;
  /** The newest request's prompt (input and cache reads): the context in use. */
  readonly contextTokens: number;
  readonly input: number;
  readonly output: number;
  readonly cached: number;
  /** Input and output of the requests since the newest typed prompt. */
  readonly turnTokens: number;
  readonly updatedAtMs: number;
}

const INITIAL: PiUsageState = {
  requests: 0,
  model: "",
  contextTokens: 0,
  input: 0,
  output: 0,
  cached: 0,
  turnTokens: 0,
  updatedAtMs: 0,
};

/**
 * pi's usage (docs/status.md, "Usage and limits"): every assistant message records its request's
 * `usage` (`input`, `output`, `cacheRead`, `cacheWrite`) and `model`; a user message starts the last
 * turn's count. The context window is in pi's own model settings, not in the log.
 */
export const piUsageReducer: TotalsReducer<PiUsageState> = {
  initial: () => INITIAL,
  /** The newest user message older than an assistant message with usage: the newest figures and the last turn. */
  enough() {
    let usage = false;
    return (record) => {
      const role = piMessage(record)?.role;
      if (role === "assistant") usage = true;
      return usage && role === "user";
    };
  },
  apply(state, record: JsonRecord) {
    const message = piMessage(record);
    if (message?.role === "user") return { ...state, turnTokens: 0 };
    if (message?.role !== "assistant") return state;
    const usage = objectField(message, "usage");
    if (!usage) return state;
    const input = countField(usage, "input");
    const output = countField(usage, "output");
    const cached = countField(usage, "cacheRead") + countField(usage, "cacheWrite");
    return {
      requests: state.requests + 1,
      model: stringField(message, "model") || state.model,
      contextTokens: input + countField(usage, "cacheRead"),
      input: state.input + input,
      output: state.output + output,
      cached: state.cached + cached,
      turnTokens: state.turnTokens + input + output,
      updatedAtMs: recordTime(record) || state.updatedAtMs,
    };
  },
};

/** The session's usage as StarAgent reports it; undefined before the first model request. */
export function piUsage(state: PiUsageState): UsageReading | undefined {
  if (state.requests === 0) return undefined;
  return {
    ...EMPTY_USAGE,
    model: state.model,
    contextTokens: state.contextTokens,
    totalInputTokens: state.input,
    totalOutputTokens: state.output,
    totalCachedTokens: state.cached,
    lastTurnTokens: state.turnTokens,
    updatedAtMs: state.updatedAtMs,
  };
}
