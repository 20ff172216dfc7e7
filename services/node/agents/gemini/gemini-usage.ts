import { tableContextWindow } from "../usage/context-windows.js";
import { EMPTY_USAGE, type UsageReading } from "../usage/usage.js";
import type { GeminiUsageState } from "./session-log.js";

/**
 * Gemini CLI's usage (docs/status.md, "Usage and limits"): each `gemini` record carries the reply's
 * `tokens` (`input`, which includes `cached`, `output`, `thoughts`, `total`) and its `model`; the sums
 * count each record once (a reply written again with its tools is the same reply). The context is the
 * newest reply's input; the window comes from the pinned table (Gemini CLI records none). Undefined
 * before the first reply.
 */
export function geminiUsage(usage: GeminiUsageState): UsageReading | undefined {
  if (usage.replies === 0) return undefined;
  const window = tableContextWindow(usage.model);
  return {
    ...EMPTY_USAGE,
    model: usage.model,
    contextTokens: usage.lastInput,
    contextWindow: window,
    contextWindowSource: window > 0 ? "table" : "none",
    totalInputTokens: usage.input,
    totalOutputTokens: usage.output,
    totalCachedTokens: usage.cached,
    totalReasoningTokens: usage.thoughts,
    lastTurnTokens: usage.lastTurn,
    updatedAtMs: usage.updatedAtMs,
  };
}
