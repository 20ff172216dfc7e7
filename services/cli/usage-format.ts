import { timestampDate } from "@bufbuild/protobuf/wkt";
import { ContextWindowSource, type SessionUsage } from "../../gen/staragent/v1/session_pb.js";
import { alignColumns } from "./columns.js";

/** A token count as people read it: 950, 12.3k, 1.2M. */
export function tokenCount(n: bigint): string {
  const v = Number(n);
  if (v < 1000) return String(v);
  if (v < 1_000_000) return `${(v / 1000).toFixed(v < 10_000 ? 1 : 0)}k`;
  return `${(v / 1_000_000).toFixed(1)}M`;
}

/**
 * The CONTEXT cell of `staragent ls`: "62%" of the window where it is known, the tokens where not,
 * "limit" when the plan's limit was hit, "" when the CLI records no usage.
 */
export function contextCell(usage: SessionUsage | undefined): string {
  if (!usage) return "";
  if (usage.limitReached) return "limit";
  if (usage.contextWindow > 0n)
    return `${Math.round((Number(usage.contextTokens) * 100) / Number(usage.contextWindow))}%`;
  return tokenCount(usage.contextTokens);
}

/** A time of day for a reset, in the local time zone of whoever runs the CLI. */
function resetTime(date: Date, now = Date.now()): string {
  const hh = String(date.getHours()).padStart(2, "0");
  const mm = String(date.getMinutes()).padStart(2, "0");
  const soon = date.getTime() - now < 86_400_000;
  return soon ? `${hh}:${mm}` : `${date.toISOString().slice(0, 10)} ${hh}:${mm}`;
}

/** `staragent usage NAME`: every field of a session's usage, one per line. */
export function usageReport(usage: SessionUsage, now = Date.now()): string {
  const source =
    usage.contextWindowSource === ContextWindowSource.LOG
      ? "from the log"
      : usage.contextWindowSource === ContextWindowSource.TABLE
        ? "from StarAgent's table"
        : "unknown";
  const context =
    usage.contextWindow > 0n
      ? `${tokenCount(usage.contextTokens)} of ${tokenCount(usage.contextWindow)} (${contextCell({ ...usage, limitReached: false })}, window ${source})`
      : `${tokenCount(usage.contextTokens)} (window unknown)`;
  const rows: string[][] = [
    ["model", usage.model || "unknown"],
    ...(usage.reasoningEffort ? [["effort", usage.reasoningEffort]] : []),
    ["context", context],
    ["last turn", tokenCount(usage.lastTurnTokens)],
    ...(usage.totalsPending
      ? [["totals", "still being counted (a long log's first read)"]]
      : [
          ["input", `${tokenCount(usage.totalInputTokens)} (${tokenCount(usage.totalCachedTokens)} cached)`],
          ["output", tokenCount(usage.totalOutputTokens)],
        ]),
    ...(usage.totalReasoningTokens > 0n ? [["reasoning", tokenCount(usage.totalReasoningTokens)]] : []),
    ...(usage.costUsd !== undefined ? [["cost", `$${usage.costUsd.toFixed(4)}`]] : []),
    ...usage.rateLimits.map((r) => [
      `limit ${r.name}`,
      `${r.usedPercent.toFixed(0)}% used${r.resetsTime ? `, resets ${resetTime(timestampDate(r.resetsTime), now)}` : ""}`,
    ]),
  ];
  if (usage.limitReached) {
    const at = usage.limitResetsTime ? resetTime(timestampDate(usage.limitResetsTime), now) : usage.limitResetsText;
    rows.push(["LIMIT", `usage limit reached${at ? `, resets ${at}` : ""}`]);
  }
  return alignColumns(rows);
}
