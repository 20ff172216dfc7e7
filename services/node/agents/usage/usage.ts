import type { JsonRecord } from "../log-follower.js";

/** Where a context window figure comes from (SessionUsage.context_window_source). */
export type ContextWindowOrigin = "log" | "table" | "none";

/** One window of a plan's rate limit (RateLimit in the contract). */
export interface RateLimitReading {
  /** "5h", "weekly", or the CLI's own word. */
  readonly name: string;
  readonly usedPercent: number;
  /** When it resets, ms since the epoch; 0 when unknown. */
  readonly resetsAtMs: number;
  readonly windowMinutes: number;
}

/** A plan limit the CLI says was hit. */
export interface LimitReached {
  /** When it resets, ms since the epoch; 0 when only the text is known. */
  readonly resetsAtMs: number;
  /** The reset as the CLI printed it ("3pm"); "" when not printed. */
  readonly resetsText: string;
}

/**
 * What a session's conversation has used, as one agent module read it from its CLI's native log: the
 * plain form of SessionUsage, built by the modules, turned into the message by the session model.
 */
export interface UsageReading {
  readonly model: string;
  readonly reasoningEffort: string;
  readonly contextTokens: number;
  readonly contextWindow: number;
  readonly contextWindowSource: ContextWindowOrigin;
  readonly totalInputTokens: number;
  readonly totalOutputTokens: number;
  readonly totalCachedTokens: number;
  readonly totalReasoningTokens: number;
  readonly lastTurnTokens: number;
  readonly rateLimits: readonly RateLimitReading[];
  readonly limitReached?: LimitReached;
  /** True while the totals are still being counted (a long log's first read): they are 0 until then. */
  readonly totalsPending?: boolean;
  /** Only where the CLI records a cost (opencode). */
  readonly costUsd?: number;
  /** When the newest record these figures come from was written (ms since the epoch; 0 unknown). */
  readonly updatedAtMs: number;
}

/** A reading with nothing in it, for modules to start from. */
export const EMPTY_USAGE: UsageReading = {
  model: "",
  reasoningEffort: "",
  contextTokens: 0,
  contextWindow: 0,
  contextWindowSource: "none",
  totalInputTokens: 0,
  totalOutputTokens: 0,
  totalCachedTokens: 0,
  totalReasoningTokens: 0,
  lastTurnTokens: 0,
  rateLimits: [],
  updatedAtMs: 0,
};

/** A non-negative finite number field of a record, else 0 (logs hold nulls and strings too). */
export function countField(record: JsonRecord | undefined, key: string): number {
  const value = record?.[key];
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}

/** A record's ISO `timestamp` in ms since the epoch, 0 when absent or unreadable. */
export function recordTime(record: JsonRecord, key = "timestamp"): number {
  const value = record[key];
  if (typeof value !== "string") return 0;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : 0;
}

/** A stable text of a reading, for telling whether it changed between two reads. */
export function usageKey(usage: UsageReading | undefined): string {
  return usage ? JSON.stringify(usage) : "";
}

/** A short form of the hit limit for the status detail: "usage limit reached, resets 15:00". */
export function limitDetail(limit: LimitReached): string {
  if (limit.resetsText) return `usage limit reached, resets ${limit.resetsText}`;
  if (limit.resetsAtMs > 0) {
    const at = new Date(limit.resetsAtMs);
    const hh = String(at.getHours()).padStart(2, "0");
    const mm = String(at.getMinutes()).padStart(2, "0");
    return `usage limit reached, resets ${hh}:${mm}`;
  }
  return "usage limit reached";
}
