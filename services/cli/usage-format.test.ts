import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { ContextWindowSource, SessionUsageSchema } from "../../gen/staragent/v1/session_pb.js";
import { contextCell, tokenCount, usageReport } from "./usage-format.js";

describe("usage in the CLI", () => {
  it("CONTEXT: the share of the window, else the tokens; 'limit' once the plan's limit is hit; empty without usage", () => {
    expect(contextCell(undefined)).toBe("");
    expect(contextCell(create(SessionUsageSchema, { contextTokens: 124_000n, contextWindow: 200_000n }))).toBe("62%");
    expect(contextCell(create(SessionUsageSchema, { contextTokens: 12_345n }))).toBe("12k");
    expect(contextCell(create(SessionUsageSchema, { contextTokens: 5n, contextWindow: 10n, limitReached: true }))).toBe(
      "limit",
    );
    expect([tokenCount(950n), tokenCount(1234n), tokenCount(2_500_000n)]).toEqual(["950", "1.2k", "2.5M"]);
  });

  it("`staragent usage`: every recorded field, rate limits with their resets, the hit limit last", () => {
    const now = Date.parse("2026-12-01T12:00:00Z");
    const in2h = timestampFromMs(now + 2 * 3600_000);
    const report = usageReport(
      create(SessionUsageSchema, {
        model: "gpt-5.5",
        reasoningEffort: "high",
        contextTokens: 129_200n,
        contextWindow: 258_400n,
        contextWindowSource: ContextWindowSource.LOG,
        totalInputTokens: 2_400_000n,
        totalCachedTokens: 2_000_000n,
        totalOutputTokens: 80_000n,
        lastTurnTokens: 1240n,
        rateLimits: [{ name: "5h", usedPercent: 100, resetsTime: in2h, windowMinutes: 300n }],
        limitReached: true,
        limitResetsText: "3pm",
      }),
      now,
    );
    const lines = report.split("\n").map((l) => l.split(/ {2,}/));
    expect(lines).toEqual([
      ["model", "gpt-5.5"],
      ["effort", "high"],
      ["context", "129k of 258k (50%, window from the log)"],
      ["last turn", "1.2k"],
      ["input", "2.4M (2.0M cached)"],
      ["output", "80k"],
      ["limit 5h", expect.stringMatching(/^100% used, resets \d\d:\d\d$/)],
      ["LIMIT", "usage limit reached, resets 3pm"],
    ]);
    expect(usageReport(create(SessionUsageSchema, { costUsd: 0.0123 }))).toContain("$0.0123");
  });

  it("`staragent usage` while a long log's totals are still counted: says so instead of printing zeros", () => {
    const report = usageReport(create(SessionUsageSchema, { model: "claude-opus-4-5", totalsPending: true }));
    expect(report).toMatch(/^totals +still being counted/m);
    expect(report).not.toMatch(/^input/m);
  });
});
