import { objectField, stringField } from "../record-fields.js";
import type { TotalsReducer } from "../usage/totals-follower.js";
import { countField, EMPTY_USAGE, recordTime, type UsageReading } from "../usage/usage.js";
import { qwenPromptText } from "./session.js";

/** Qwen Code's token sums over a session log. */
export interface QwenUsageState {
  readonly model: string;
  readonly replies: number;
  readonly input: number;
  readonly output: number;
  readonly cached: number;
  readonly thoughts: number;
  readonly lastInput: number;
  readonly lastTurn: number;
  readonly contextWindow: number;
  readonly updatedAtMs: number;
}

const INITIAL: QwenUsageState = {
  model: "",
  replies: 0,
  input: 0,
  output: 0,
  cached: 0,
  thoughts: 0,
  lastInput: 0,
  lastTurn: 0,
  contextWindow: 0,
  updatedAtMs: 0,
};

/**
 * Qwen Code's usage (docs/status.md, "Usage and limits"): each `assistant` record of a model response
 * carries `usageMetadata` (`promptTokenCount`, which includes `cachedContentTokenCount`,
 * `candidatesTokenCount`, `thoughtsTokenCount`, `totalTokenCount`), its `model` and the
 * `contextWindowSize` Qwen Code uses; the last turn is every response since the newest typed prompt.
 */
export const qwenUsageReducer: TotalsReducer<QwenUsageState> = {
  initial: () => INITIAL,
  /** The newest typed prompt older than a response with usage: the newest figures and the last turn. */
  enough() {
    let reply = false;
    return (record) => {
      if (record.type === "assistant" && objectField(record, "usageMetadata")) reply = true;
      return reply && qwenPromptText(record) !== "";
    };
  },
  apply(state, record) {
    if (qwenPromptText(record) !== "") return { ...state, lastTurn: 0 };
    if (record.type !== "assistant") return state;
    const usage = objectField(record, "usageMetadata");
    if (!usage) return state;
    return {
      model: stringField(record, "model") || state.model,
      replies: state.replies + 1,
      input: state.input + countField(usage, "promptTokenCount"),
      output: state.output + countField(usage, "candidatesTokenCount"),
      cached: state.cached + countField(usage, "cachedContentTokenCount"),
      thoughts: state.thoughts + countField(usage, "thoughtsTokenCount"),
      lastInput: countField(usage, "promptTokenCount"),
      lastTurn: state.lastTurn + countField(usage, "totalTokenCount"),
      contextWindow: countField(record, "contextWindowSize") || state.contextWindow,
      updatedAtMs: recordTime(record) || state.updatedAtMs,
    };
  },
};

/** The reading of a session's sums; undefined before the first response. */
export function qwenUsage(state: QwenUsageState): UsageReading | undefined {
  if (state.replies === 0) return undefined;
  return {
    ...EMPTY_USAGE,
    model: state.model,
    contextTokens: state.lastInput,
    contextWindow: state.contextWindow,
    contextWindowSource: state.contextWindow > 0 ? "log" : "none",
    totalInputTokens: state.input,
    totalOutputTokens: state.output,
    totalCachedTokens: state.cached,
    totalReasoningTokens: state.thoughts,
    lastTurnTokens: state.lastTurn,
    updatedAtMs: state.updatedAtMs,
  };
}
