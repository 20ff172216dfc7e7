import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { ContextWindowSource, type SessionUsage, SessionUsageSchema } from "../../gen/staragent/v1/session_pb.js";
import type { ContextWindowOrigin, UsageReading } from "./agents/usage/usage.js";

const SOURCES: Readonly<Record<ContextWindowOrigin, ContextWindowSource>> = {
  log: ContextWindowSource.LOG,
  table: ContextWindowSource.TABLE,
  none: ContextWindowSource.UNSPECIFIED,
};

/** Token counts are whole numbers in the contract; logs could hold fractions or huge values. */
function tokens(n: number): bigint {
  return BigInt(Math.max(0, Math.trunc(Number.isFinite(n) ? n : 0)));
}

/**
 * The contract's SessionUsage for an agent module's reading (undefined stays undefined: the field is
 * absent when the CLI records nothing).
 */
export function usageMessage(usage: UsageReading | undefined): SessionUsage | undefined {
  if (!usage) return undefined;
  return create(SessionUsageSchema, {
    model: usage.model,
    reasoningEffort: usage.reasoningEffort,
    contextTokens: tokens(usage.contextTokens),
    contextWindow: tokens(usage.contextWindow),
    contextWindowSource: SOURCES[usage.contextWindowSource],
    totalInputTokens: tokens(usage.totalInputTokens),
    totalOutputTokens: tokens(usage.totalOutputTokens),
    totalCachedTokens: tokens(usage.totalCachedTokens),
    totalReasoningTokens: tokens(usage.totalReasoningTokens),
    lastTurnTokens: tokens(usage.lastTurnTokens),
    rateLimits: usage.rateLimits.map((r) => ({
      name: r.name,
      usedPercent: r.usedPercent,
      resetsTime: r.resetsAtMs > 0 ? timestampFromMs(r.resetsAtMs) : undefined,
      windowMinutes: tokens(r.windowMinutes),
    })),
    limitReached: usage.limitReached !== undefined,
    limitResetsTime:
      usage.limitReached && usage.limitReached.resetsAtMs > 0
        ? timestampFromMs(usage.limitReached.resetsAtMs)
        : undefined,
    limitResetsText: usage.limitReached?.resetsText ?? "",
    costUsd: usage.costUsd,
    totalsPending: usage.totalsPending === true,
    updateTime: usage.updatedAtMs > 0 ? timestampFromMs(usage.updatedAtMs) : undefined,
  });
}
