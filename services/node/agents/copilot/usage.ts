import type { JsonRecord } from "../log-follower.js";
import { objectField, stringField } from "../record-fields.js";
import type { TotalsReducer } from "../usage/totals-follower.js";
import { countField, EMPTY_USAGE, recordTime, type UsageReading } from "../usage/usage.js";

/** The sums of a Copilot CLI session's `session.usage_record`s (one per model request). */
export interface CopilotUsageState {
  readonly requests: number;
  readonly model: string;
  /** The newest request's prompt: the context in use. */
  readonly contextTokens: number;
  /** `maxPromptTokens` of the newest request: the context window the CLI works with. */
  readonly contextWindow: number;
  readonly input: number;
  readonly output: number;
  readonly cached: number;
  /** Input and output of the requests since the newest typed prompt. */
  readonly turnTokens: number;
  readonly updatedAtMs: number;
}

const INITIAL: CopilotUsageState = {
  requests: 0,
  model: "",
  contextTokens: 0,
  contextWindow: 0,
  input: 0,
  output: 0,
  cached: 0,
  turnTokens: 0,
  updatedAtMs: 0,
};

/**
 * Copilot CLI's usage (docs/status.md, "Usage and limits"): every model request writes a
 * `session.usage_record` with `usage.inputTokens`, `outputTokens`, `cacheReadTokens`,
 * `cacheWriteTokens`, the model and `maxPromptTokens`; a `user.message` starts the last turn's count.
 */
export const copilotUsageReducer: TotalsReducer<CopilotUsageState> = {
  initial: () => INITIAL,
  /** The newest `user.message` older than a usage record: the newest figures and the last turn. */
  enough() {
    let usage = false;
    return (record) => {
      if (record.type === "session.usage_record") usage = true;
      return usage && record.type === "user.message";
    };
  },
  apply(state, record: JsonRecord) {
    if (record.type === "user.message") return { ...state, turnTokens: 0 };
    if (record.type !== "session.usage_record") return state;
    const usage = objectField(objectField(record, "data"), "usage");
    if (!usage) return state;
    const input = countField(usage, "inputTokens");
    const output = countField(usage, "outputTokens");
    return {
      requests: state.requests + 1,
      model: stringField(usage, "model") || state.model,
      contextTokens: input,
      contextWindow: countField(usage, "maxPromptTokens") || state.contextWindow,
      input: state.input + input,
      output: state.output + output,
      cached: state.cached + countField(usage, "cacheReadTokens") + countField(usage, "cacheWriteTokens"),
      turnTokens: state.turnTokens + input + output,
      updatedAtMs: recordTime(record) || state.updatedAtMs,
    };
  },
};

/** The session's usage as StarAgent reports it; undefined before the first model request. */
export function copilotUsage(state: CopilotUsageState): UsageReading | undefined {
  if (state.requests === 0) return undefined;
  return {
    ...EMPTY_USAGE,
    model: state.model,
    contextTokens: state.contextTokens,
    contextWindow: state.contextWindow,
    contextWindowSource: state.contextWindow > 0 ? "log" : "none",
    totalInputTokens: state.input,
    totalOutputTokens: state.output,
    totalCachedTokens: state.cached,
    lastTurnTokens: state.turnTokens,
    updatedAtMs: state.updatedAtMs,
  };
}
