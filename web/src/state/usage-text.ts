import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { SessionUsage } from "../../../gen/staragent/v1/session_pb.js";

/** A token count as people read it: 950, 12.3k, 1.2M. */
export function tokens(n: bigint): string {
  const v = Number(n);
  if (v < 1000) return String(v);
  if (v < 1_000_000) return `${(v / 1000).toFixed(v < 10_000 ? 1 : 0)}k`;
  return `${(v / 1_000_000).toFixed(1)}M`;
}

/** The share of the context window used, 0 to 100, or undefined when the window is unknown. */
export function contextPercent(usage: SessionUsage): number | undefined {
  if (usage.contextWindow <= 0n) return undefined;
  return Math.min(100, Math.round((Number(usage.contextTokens) * 100) / Number(usage.contextWindow)));
}

/** When a limit resets, as a time of day (with the date when it is not within a day). */
export function resetText(usage: {
  limitResetsTime?: SessionUsage["limitResetsTime"];
  limitResetsText?: string;
}): string {
  if (usage.limitResetsTime) return timeOfDay(timestampDate(usage.limitResetsTime));
  return usage.limitResetsText ?? "";
}

/** A time as "15:00", or "Dec 3, 15:00" when more than a day away. */
export function timeOfDay(date: Date, now = Date.now()): string {
  const time = date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  return date.getTime() - now < 86_400_000
    ? time
    : `${date.toLocaleDateString([], { month: "short", day: "numeric" })}, ${time}`;
}
