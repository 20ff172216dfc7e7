import { appendFile, copyFile, open, readFile, rename, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { eachTempDir } from "../../../../test/support/temp-dir.js";
import { claudeLimitReached, claudeUsage, claudeUsageReducer } from "../claude/usage.js";
import { codexLimitReached, codexUsage, codexUsageReducer } from "../codex/usage.js";
import { fixtureSetup as opencodeSetup } from "../opencode/fixtures/setup.js";
import { queryUsage } from "../opencode/usage.js";
import { tableContextWindow } from "./context-windows.js";
import { RecentUsageFollower } from "./recent-follower.js";
import { MAX_LINE_BYTES, TOTALS_CHUNK_BYTES, TotalsFollower, WHOLE_FIRST_READ_BYTES } from "./totals-follower.js";

const AGENTS = join(import.meta.dirname, "..");
const claudeFixture = (path: string) => join(AGENTS, "claude", "fixtures", path);
const codexFixture = (path: string) => join(AGENTS, "codex", "fixtures", path);

let dir: string;
eachTempDir("sa-usage-", (made) => (dir = made));

/** A whole read: a log big enough to be counted in the background is read again once counted. */
async function claudeRead(path: string) {
  const follower = new TotalsFollower(claudeUsageReducer);
  let read = await follower.read(path);
  if (read && !read.complete) {
    await follower.settled();
    read = await follower.read(path);
  }
  if (!read?.complete) throw new Error(`could not read ${path}`);
  return claudeUsage(read.state);
}

async function codexRead(path: string) {
  const read = await new RecentUsageFollower(codexUsageReducer).read(path);
  if (!read) throw new Error(`could not read ${path}`);
  return codexUsage(read.state);
}

describe("Claude Code usage", () => {
  it("2.1.332 (recorded against the mock): six responses of 12 in and 6 out, the mock's model", async () => {
    const usage = await claudeRead(claudeFixture("chat-history/2.1.332/conversation.jsonl"));
    expect(usage).toMatchObject({
      model: "claude-compat-mock",
      contextTokens: 12,
      contextWindow: 0,
      contextWindowSource: "none",
      totalInputTokens: 72,
      totalOutputTokens: 36,
      totalCachedTokens: 0,
      totalReasoningTokens: 0,
    });
    expect(usage?.limitReached).toBeUndefined();
    expect(usage?.costUsd).toBeUndefined();
  });

  describe("2.1.332, recorded by the usage compat run against the mock (fixtures/usage/2.1.332)", () => {
    const recorded = (name: string) => claudeRead(claudeFixture(`usage/2.1.332/${name}.jsonl`));
    it("two turns: the totals the mock sent (cache reads counted as input), the newest request's context", async () => {
      expect(await recorded("two-turns")).toMatchObject({
        model: "claude-compat-mock",
        contextTokens: 2345,
        totalInputTokens: 3579,
        totalCachedTokens: 1300,
        totalOutputTokens: 134,
        lastTurnTokens: 2345 + 78,
      });
    });
    it("a turn in progress: the first turn's figures, nothing of the held reply yet", async () => {
      expect(await recorded("turn-in-progress")).toMatchObject({
        contextTokens: 1234,
        totalInputTokens: 1234,
        totalOutputTokens: 56,
        lastTurnTokens: 0,
      });
    });
    it("compacted (/compact): the context drops to the request after it; the summary request is not in the transcript", async () => {
      expect(await recorded("compacted")).toMatchObject({
        contextTokens: 500,
        totalInputTokens: 3579 + 500,
        totalOutputTokens: 134 + 20,
        lastTurnTokens: 520,
      });
    });
    it("a hit five-hour limit with a claude.ai login: the plan's limit, its reset time from quotaLimits.resetsAt", async () => {
      const usage = await recorded("plan-limit");
      // The mock refused with the limit resetting at 1796325654 s; the error line says so, and prints
      // the reset in the machine's zone.
      expect(usage?.limitReached).toEqual({ resetsAtMs: 1_796_325_654_000, resetsText: "7:20pm (UTC)" });
      expect(usage).toMatchObject({ totalInputTokens: 3579, totalOutputTokens: 134, contextTokens: 2345 });
    });
    it("a 429 an API-key login prints as an API error: not the plan's limit; the totals stay", async () => {
      const usage = await recorded("api-error-429");
      expect(usage?.limitReached).toBeUndefined();
      expect(usage).toMatchObject({ totalInputTokens: 3579, totalOutputTokens: 134, contextTokens: 2345 });
    });
  });

  it("1.0.x (recorded): lines of one response are counted once with the largest usage; cache counts as input", async () => {
    const usage = await claudeRead(claudeFixture("1.0.x/text-null-stop-reason.jsonl"));
    // Response 1: 3 + 1331 + 14874 in, 172 out (its three lines say 3, 172, 172); response 2: 6 + 1004 + 20542 in, 10 out.
    expect(usage).toMatchObject({
      model: "claude-sonnet-4-20250514",
      contextTokens: 6 + 1004 + 20542,
      contextWindow: 200_000,
      contextWindowSource: "table",
      totalInputTokens: 16_208 + 21_552,
      totalCachedTokens: 1331 + 14874 + 1004 + 20542,
      totalOutputTokens: 182,
      lastTurnTokens: 16_208 + 172 + 21_552 + 10,
    });
  });

  it("a compacted conversation: the context drops to the newest request's; sidechains are not counted", async () => {
    const usage = await claudeRead(claudeFixture("usage/2.1.x/compacted.jsonl"));
    expect(usage).toMatchObject({
      model: "claude-opus-4-5-20251101",
      contextTokens: 2 + 100 + 1500,
      contextWindow: 200_000,
      totalInputTokens: 32_010 + 1503 + 1602,
      totalCachedTokens: 32_000 + 1500 + 1600,
      totalOutputTokens: 400 + 50 + 60,
      lastTurnTokens: 1503 + 50 + 1602 + 60,
      updatedAtMs: Date.parse("2026-11-30T10:06:12.000Z"),
    });
  });

  it("a turn in progress: what its requests used so far", async () => {
    const usage = await claudeRead(claudeFixture("usage/2.1.x/turn-in-progress.jsonl"));
    expect(usage).toMatchObject({
      contextTokens: 1503,
      totalInputTokens: 33_513,
      totalOutputTokens: 450,
      lastTurnTokens: 1553,
    });
  });

  it("a hit plan limit: limit reached with the reset as printed; a later reply clears it", async () => {
    const path = claudeFixture("usage/2.1.x/limit-reached.jsonl");
    const usage = await claudeRead(path);
    expect(usage?.limitReached).toEqual({ resetsAtMs: 0, resetsText: "3pm (Europe/Berlin)" });
    expect(usage).toMatchObject({ contextTokens: 1602, lastTurnTokens: 0 });
    const copy = join(dir, "t.jsonl");
    await copyFile(path, copy);
    const lines = (await readFile(claudeFixture("usage/2.1.x/compacted.jsonl"), "utf8")).trim().split("\n");
    await appendFile(copy, `${lines[10]}\n`);
    expect((await claudeRead(copy))?.limitReached).toBeUndefined();
  });

  it("reads the limit wording of the screen and of older builds", () => {
    expect(claudeLimitReached("  You’ve hit your weekly limit · resets Dec 3, 9am\n❯ ")).toEqual({
      resetsAtMs: 0,
      resetsText: "Dec 3, 9am",
    });
    expect(claudeLimitReached("You've hit your limit")).toEqual({ resetsAtMs: 0, resetsText: "" });
    expect(claudeLimitReached("Claude AI usage limit reached|1764601200")).toEqual({
      resetsAtMs: 1_764_601_200_000,
      resetsText: "",
    });
    expect(claudeLimitReached("You have plenty of usage left")).toBeUndefined();
  });

  it("a resumed conversation: the totals include what the conversation used before the resume", async () => {
    // `claude --resume` appends to the conversation's transcript: the same file, grown.
    const path = join(dir, "resumed.jsonl");
    const text = await readFile(claudeFixture("usage/2.1.x/compacted.jsonl"), "utf8");
    await writeFile(path, text);
    const follower = new TotalsFollower(claudeUsageReducer);
    await follower.read(path);
    const lines = text.trim().split("\n");
    await appendFile(path, `${lines[7]?.replace('"u2"', '"u9"')}\n${lines[10]?.replace('"msg_3"', '"msg_9"')}\n`);
    const resumed = await follower.read(path);
    expect(resumed && claudeUsage(resumed.state)).toMatchObject({
      totalInputTokens: 35_115 + 1602,
      totalOutputTokens: 510 + 60,
      lastTurnTokens: 1662,
    });
  });
});

describe("the totals follower", () => {
  /** A transcript of `n` responses, each a prompt and two lines of one response. */
  function turns(from: number, n: number): string {
    let out = "";
    for (let i = from; i < from + n; i++) {
      out += `${JSON.stringify({ type: "user", uuid: `u${i}`, message: { role: "user", content: `prompt ${i}` } })}\n`;
      for (const output of [1, 10 + i]) {
        out += `${JSON.stringify({
          type: "assistant",
          uuid: `a${i}-${output}`,
          requestId: `r${i}`,
          message: {
            id: `m${i}`,
            model: "claude-sonnet-4-5",
            content: [{ type: "text", text: "x".repeat(i % 50) }],
            usage: { input_tokens: i, cache_read_input_tokens: 100 * i, output_tokens: output },
          },
        })}\n`;
      }
    }
    return out;
  }

  async function fullRead(path: string): Promise<string> {
    return JSON.stringify(await claudeRead(path));
  }

  it("equals a full read after appends (a partial last line included), truncation and rotation", async () => {
    const path = join(dir, "log.jsonl");
    const follower = new TotalsFollower(claudeUsageReducer);
    const followed = async () => {
      const read = await follower.read(path);
      return { text: JSON.stringify(read && claudeUsage(read.state)), bytes: read?.bytesRead ?? -1 };
    };
    await writeFile(path, turns(0, 50));
    expect((await followed()).text).toBe(await fullRead(path));
    // Appends, one of them stopping mid-line (the CLI mid-write).
    const more = turns(50, 20);
    const cut = more.length - 40;
    await appendFile(path, more.slice(0, cut));
    const grown = await followed();
    expect(grown.text).toBe(await fullRead(path));
    expect(grown.bytes).toBeLessThan(cut + 1024);
    await appendFile(path, more.slice(cut));
    expect((await followed()).text).toBe(await fullRead(path));
    // Unchanged: nothing read.
    expect((await followed()).bytes).toBe(0);
    // Truncated to nothing, then written again, shorter.
    await truncate(path, 0);
    await writeFile(path, turns(200, 5));
    expect((await followed()).text).toBe(await fullRead(path));
    // Truncated and written again past its old size: its first bytes differ.
    await writeFile(path, turns(300, 60));
    expect((await followed()).text).toBe(await fullRead(path));
    // Rotated: the old file moved away, a new one in its place.
    await rename(path, join(dir, "log.1.jsonl"));
    await writeFile(path, turns(500, 3));
    expect((await followed()).text).toBe(await fullRead(path));
  });

  it("answers a long log's first read from its newest turn, counts the rest in the background, then equals a full read", async () => {
    const path = join(dir, "long-log.jsonl");
    // Turns until the log is past WHOLE_FIRST_READ_BYTES, the newest a turn in progress (a prompt only).
    let text = "";
    let n = 0;
    while (text.length <= WHOLE_FIRST_READ_BYTES) {
      text += turns(n, 500);
      n += 500;
    }
    const prompt = `${JSON.stringify({ type: "user", uuid: "u-new", message: { role: "user", content: "newest" } })}\n`;
    await writeFile(path, text + prompt);
    let startCounting = () => {};
    const follower = new TotalsFollower(claudeUsageReducer, new Promise<void>((r) => (startCounting = r)));
    const first = await follower.read(path);
    expect(first?.complete).toBe(false);
    // Back to the newest reply's prompt, not the whole log.
    expect(first?.bytesRead).toBeLessThan(256 * 1024);
    const pending = first && claudeUsage(first.state, undefined, first.complete);
    const whole = await claudeRead(path);
    expect(pending).toMatchObject({
      model: whole?.model,
      contextTokens: whole?.contextTokens,
      lastTurnTokens: 0,
      totalInputTokens: 0,
      totalOutputTokens: 0,
      totalCachedTokens: 0,
      totalsPending: true,
    });
    expect(whole?.contextTokens).toBe(n - 1 + 100 * (n - 1));
    // A turn appended while the count runs: followed forward, still pending until the count ends.
    await appendFile(path, turns(n, 1));
    const grown = await follower.read(path);
    expect(grown?.complete).toBe(false);
    expect(grown && claudeUsage(grown.state, undefined, grown.complete)).toMatchObject({
      contextTokens: n + 100 * n,
      lastTurnTokens: n + 100 * n + 10 + n,
    });
    startCounting();
    await follower.settled();
    const counted = await follower.read(path);
    expect(counted?.complete).toBe(true);
    expect(JSON.stringify(counted && claudeUsage(counted.state))).toBe(await fullRead(path));
    expect(counted && claudeUsage(counted.state)).not.toHaveProperty("totalsPending");
  });

  it("reads a log with a line longer than one step", async () => {
    const path = join(dir, "long.jsonl");
    const long = JSON.stringify({
      type: "assistant",
      message: {
        id: "big",
        model: "m",
        content: [{ type: "text", text: "y".repeat(TOTALS_CHUNK_BYTES * 2) }],
        usage: { input_tokens: 7, output_tokens: 3 },
      },
    });
    await writeFile(path, `${turns(0, 2)}${long}\n${turns(2, 2)}`);
    expect(await claudeRead(path)).toMatchObject({
      totalInputTokens: 7 + 101 + 303 + 202 + 0,
      totalOutputTokens: 3 + 10 + 11 + 12 + 13,
    });
  });

  it("skips a line longer than MAX_LINE_BYTES without holding it, and counts the lines around it", async () => {
    const path = join(dir, "huge.jsonl");
    await writeFile(path, turns(0, 2));
    const file = await open(path, "a");
    await file.write(Buffer.alloc(MAX_LINE_BYTES + TOTALS_CHUNK_BYTES, 0x20));
    await file.write(`\n${turns(2, 2)}`);
    await file.close();
    expect(await claudeRead(path)).toMatchObject({
      totalInputTokens: 0 + 101 + 202 + 303,
      totalOutputTokens: 10 + 11 + 12 + 13,
    });
  });
});

describe("Codex usage", () => {
  it("0.171.0 (recorded against the mock): cumulative totals, the newest turn, the log's context window", async () => {
    const usage = await codexRead(codexFixture("chat-history/0.171.0/conversation.jsonl"));
    expect(usage).toMatchObject({
      model: "mock-model",
      reasoningEffort: "",
      contextTokens: 12,
      contextWindow: 258_400,
      contextWindowSource: "log",
      totalInputTokens: 84,
      totalOutputTokens: 42,
      totalCachedTokens: 0,
      totalReasoningTokens: 0,
      lastTurnTokens: 18,
      rateLimits: [],
    });
    expect(usage?.limitReached).toBeUndefined();
  });

  describe("0.171.0, recorded by the usage compat run against the mock (fixtures/usage/0.171.0)", () => {
    const recorded = (name: string) => codexRead(codexFixture(`usage/0.171.0/${name}.jsonl`));
    it("two turns: the totals the mock sent (1234 + 2345 in, 200 + 1100 cached, 56 + 78 out), the newest request's context", async () => {
      expect(await recorded("two-turns")).toMatchObject({
        model: "mock-model",
        contextTokens: 2345,
        contextWindow: 258_400,
        contextWindowSource: "log",
        totalInputTokens: 3579,
        totalCachedTokens: 1300,
        totalOutputTokens: 134,
        lastTurnTokens: 2345 + 78,
        rateLimits: [],
      });
    });
    it("a turn in progress: the first turn's figures, nothing of the running one yet", async () => {
      expect(await recorded("turn-in-progress")).toMatchObject({
        contextTokens: 1234,
        totalInputTokens: 1234,
        totalOutputTokens: 56,
        lastTurnTokens: 0,
      });
    });
    it("rate limits from the response's x-codex-* headers: 5h and weekly with their resets", async () => {
      const usage = await recorded("rate-limits");
      expect(usage?.rateLimits).toEqual([
        { name: "5h", usedPercent: 42.5, resetsAtMs: expect.any(Number), windowMinutes: 300 },
        { name: "weekly", usedPercent: 7, resetsAtMs: expect.any(Number), windowMinutes: 10_080 },
      ]);
      expect(usage?.rateLimits[0]?.resetsAtMs).toBeGreaterThan(Date.parse("2026-12-01T00:00:00Z"));
      expect(usage?.contextTokens).toBe(3000);
    });
    it("a request refused for the plan's limit: task_complete's error names it, with the reset Codex printed", async () => {
      const usage = await recorded("limit-reached");
      expect(usage?.limitReached?.resetsText).toMatch(/^\d{1,2}:\d\d [AP]M$/);
      // The turn before the refusal still holds the totals.
      expect(usage).toMatchObject({ totalInputTokens: 6579, totalOutputTokens: 143 });
    });
    it("compacted: the context drops to the request after the summary; the totals keep growing", async () => {
      expect(await recorded("compacted")).toMatchObject({
        contextTokens: 500,
        totalInputTokens: 6579 + 4000 + 500,
        totalOutputTokens: 143 + 300 + 20,
      });
    });
  });

  function line(type: string, payload: Record<string, unknown>, at = "2026-11-30T12:00:00.000Z"): string {
    return `${JSON.stringify({ timestamp: at, type, payload })}\n`;
  }
  function tokenCount(total: number, last: number, limits: Record<string, unknown> | null = null): string {
    const usage = (n: number) => ({
      input_tokens: n,
      cached_input_tokens: Math.floor(n / 2),
      cache_write_input_tokens: 0,
      output_tokens: n / 10,
      reasoning_output_tokens: n / 20,
      total_tokens: n + n / 10,
    });
    return line("event_msg", {
      type: "token_count",
      info: { total_token_usage: usage(total), last_token_usage: usage(last), model_context_window: 272_000 },
      rate_limits: limits,
    });
  }

  it("rate limits (primary 5h, secondary weekly) and a reached limit with the window's reset", async () => {
    const path = join(dir, "rollout.jsonl");
    const limits = (used: number, reached: string | null) => ({
      primary: { used_percent: used, window_minutes: 300, resets_at: 1_764_600_000 },
      secondary: { used_percent: 40, window_minutes: 10_080, resets_at: 1_765_000_000 },
      plan_type: "plus",
      rate_limit_reached_type: reached,
    });
    await writeFile(
      path,
      line("turn_context", { model: "gpt-5.3-codex", effort: "high" }) + tokenCount(1000, 1000, limits(42.5, null)),
    );
    const follower = new RecentUsageFollower(codexUsageReducer);
    const first = await follower.read(path);
    expect(first && codexUsage(first.state)).toMatchObject({
      model: "gpt-5.3-codex",
      reasoningEffort: "high",
      totalReasoningTokens: 50,
      totalCachedTokens: 500,
      rateLimits: [
        { name: "5h", usedPercent: 42.5, resetsAtMs: 1_764_600_000_000, windowMinutes: 300 },
        { name: "weekly", usedPercent: 40, resetsAtMs: 1_765_000_000_000, windowMinutes: 10_080 },
      ],
    });
    await appendFile(path, tokenCount(2000, 1000, limits(100, "primary")));
    const reached = await follower.read(path);
    expect(reached && codexUsage(reached.state)?.limitReached).toEqual({
      resetsAtMs: 1_764_600_000_000,
      resetsText: "",
    });
    expect(reached && codexUsage(reached.state)?.lastTurnTokens).toBe(2200);
  });

  it("a turn in progress before its first token count: the previous totals, nothing for the turn yet", async () => {
    const path = join(dir, "rollout.jsonl");
    await writeFile(
      path,
      line("turn_context", { model: "a" }) +
        tokenCount(1000, 1000) +
        line("event_msg", { type: "task_complete" }) +
        line("event_msg", { type: "task_started" }) +
        line("turn_context", { model: "b", collaboration_mode: { settings: { reasoning_effort: "low" } } }),
    );
    expect(await codexRead(path)).toMatchObject({
      model: "b",
      reasoningEffort: "low",
      totalInputTokens: 1000,
      lastTurnTokens: 0,
      contextTokens: 1000,
    });
  });

  it("a compacted rollout: the context drops while the totals keep growing", async () => {
    const path = join(dir, "rollout.jsonl");
    await writeFile(
      path,
      line("turn_context", { model: "a" }) +
        tokenCount(50_000, 40_000) +
        line("compacted", { message: "summary" }) +
        line("turn_context", { model: "a" }) +
        tokenCount(52_000, 2_000),
    );
    expect(await codexRead(path)).toMatchObject({ contextTokens: 2000, totalInputTokens: 52_000 });
  });

  it("follows growth, truncation and rotation to what a fresh read says", async () => {
    const path = join(dir, "rollout.jsonl");
    const follower = new RecentUsageFollower(codexUsageReducer);
    const same = async () => {
      const read = await follower.read(path);
      expect(JSON.stringify(read && codexUsage(read.state))).toBe(JSON.stringify(await codexRead(path)));
    };
    await writeFile(path, line("turn_context", { model: "a" }) + tokenCount(100, 100));
    await same();
    await appendFile(path, line("turn_context", { model: "b" }) + tokenCount(300, 200));
    await same();
    await truncate(path, 0);
    await writeFile(path, line("turn_context", { model: "c" }) + tokenCount(10, 10));
    await same();
    await rename(path, join(dir, "old.jsonl"));
    await writeFile(path, line("turn_context", { model: "d" }) + tokenCount(20, 20));
    await same();
  });

  it("reads the usage-limit screen and its reset", () => {
    expect(codexLimitReached("■ You’ve hit your usage limit. Upgrade to Pro, or try again at 3:05 PM.\n")).toEqual({
      resetsAtMs: 0,
      resetsText: "3:05 PM",
    });
    expect(codexLimitReached("› Ask Codex to do anything")).toBeUndefined();
  });
});

describe("opencode usage", () => {
  async function opencodeRead(rows: string) {
    const source = join(AGENTS, "opencode", "fixtures", "chat-history", rows);
    const { path, session } = await opencodeSetup.placeHistoryLog(source, undefined, dir);
    const db = new Database(path, { readonly: true });
    try {
      return queryUsage(db, session);
    } finally {
      db.close();
    }
  }

  it("1.18.33 (recorded against the mock): sums of every assistant message, the newest turn, the cost", async () => {
    const usage = await opencodeRead("1.18.33/unicode-turn-done.rows.jsonl");
    expect(usage).toMatchObject({
      model: "mock-model",
      contextTokens: 12,
      contextWindow: 0,
      contextWindowSource: "none",
      totalInputTokens: 36,
      totalOutputTokens: 18,
      totalCachedTokens: 0,
      lastTurnTokens: 36,
      costUsd: 0,
    });
  });

  it("1.18.33, recorded by the usage compat run: two turns' sums as the mock sent them, the newest context", async () => {
    const usage = await opencodeRead("../usage/1.18.33/two-turns.jsonl");
    expect(usage).toMatchObject({
      model: "mock-model",
      contextTokens: 2345,
      totalInputTokens: 3579,
      totalCachedTokens: 1300,
      totalOutputTokens: 134,
    });
  });

  it("1.18.33, recorded: a turn in progress counts the first turn; compacted, the context drops to the turn after", async () => {
    expect(await opencodeRead("../usage/1.18.33/turn-in-progress.jsonl")).toMatchObject({
      totalInputTokens: 1234,
      totalOutputTokens: 56,
      contextTokens: 0,
      lastTurnTokens: 0,
    });
    expect(await opencodeRead("../usage/1.18.33/compacted.jsonl")).toMatchObject({
      contextTokens: 500,
      totalInputTokens: 3579 + 4000 + 500,
      totalOutputTokens: 134 + 300 + 20,
    });
  });

  it("a turn in progress: its unfinished reply counts what it recorded (nothing yet)", async () => {
    const usage = await opencodeRead("1.18.33/turn-in-progress.rows.jsonl");
    expect(usage).toMatchObject({ contextTokens: 0, totalInputTokens: 48, totalOutputTokens: 24, lastTurnTokens: 0 });
  });
});

describe("the pinned context windows", () => {
  it("matches by the longest prefix, strips a provider, knows Claude Code's 1M suffix, and says 0 when unknown", () => {
    expect(tableContextWindow("claude-sonnet-4-5-20250929")).toBe(200_000);
    expect(tableContextWindow("claude-sonnet-4-5[1m]")).toBe(1_000_000);
    expect(tableContextWindow("openai/gpt-4.1-mini")).toBe(1_047_576);
    expect(tableContextWindow("mock-model")).toBe(0);
  });
});
