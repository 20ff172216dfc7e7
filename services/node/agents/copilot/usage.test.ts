import { copyFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { TotalsFollower } from "../usage/totals-follower.js";
import { copilotUsage, copilotUsageReducer } from "./usage.js";

const FIXTURES = join(import.meta.dirname, "fixtures", "1.0");
const temps: string[] = [];
afterAll(async () => {
  await Promise.all(temps.map((d) => rm(d, { recursive: true, force: true })));
});

async function usageOf(fixture: string) {
  const dir = await mkdtemp(join(tmpdir(), "sa-copilot-usage-"));
  temps.push(dir);
  const path = join(dir, "events.jsonl");
  await copyFile(join(FIXTURES, fixture), path);
  const totals = await new TotalsFollower(copilotUsageReducer).read(path);
  return totals && copilotUsage(totals.state);
}

describe("Copilot CLI usage from session.usage_record", () => {
  it("sums every request and takes the context window from maxPromptTokens (recorded from 1.0.102)", async () => {
    // Two prompts, three model requests of 12 in and 6 out each (the mock's figures); the second
    // prompt's turn took two of them (the tool call, then the answer).
    expect(await usageOf("tool-done.jsonl")).toMatchObject({
      model: "mock-model",
      contextTokens: 12,
      contextWindow: 128_000,
      contextWindowSource: "log",
      totalInputTokens: 36,
      totalOutputTokens: 18,
      totalCachedTokens: 0,
      lastTurnTokens: 36,
    });
  });

  it("is undefined before the first model request", async () => {
    expect(await usageOf("prompt-sent.jsonl")).toBeUndefined();
    expect(copilotUsageReducer.initial().requests).toBe(0);
    expect(copilotUsage(copilotUsageReducer.initial())).toBeUndefined();
  });
});
