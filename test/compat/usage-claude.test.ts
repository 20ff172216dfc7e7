import { copyFile, readdir, readFile, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import { REPO_ROOT } from "../support/servers.js";
import { claudeDriver, claudePlanDriver } from "./claude-driver.js";
import type { ScriptedError } from "./model-reply.js";
import { defineUsageScenario, type NativeTotals } from "./usage-scenario.js";

/** When the mock's refused request says the session limit resets (seconds since the epoch). */
const RESET_S = Math.floor(Date.now() / 1000) + 2 * 3600;

/** A request refused as the API refuses it once the five-hour limit is hit. */
const FIVE_HOUR_LIMIT_HIT: ScriptedError = {
  status: 429,
  headers: {
    "anthropic-ratelimit-unified-status": "rejected",
    "anthropic-ratelimit-unified-reset": String(RESET_S),
    "anthropic-ratelimit-unified-representative-claim": "five_hour",
    "anthropic-ratelimit-unified-5h-status": "rejected",
    "anthropic-ratelimit-unified-5h-reset": String(RESET_S),
    "anthropic-ratelimit-unified-5h-utilization": "1.0",
    "x-should-retry": "false",
  },
  body: { type: "error", error: { type: "rate_limit_error", message: "Rate limited" } },
};

/** The instance's transcript (the newest written). */
async function transcript(home: string): Promise<string> {
  const projects = join(home, ".claude", "projects");
  const files = (await readdir(projects, { recursive: true })).filter((f) => f.endsWith(".jsonl"));
  if (files.length === 0) throw new Error("no transcript yet");
  // The newest written: a resumed conversation may go on in a new file.
  const times = await Promise.all(files.map(async (f) => [(await stat(join(projects, f))).mtimeMs, f] as const));
  return join(projects, times.sort((x, y) => y[0] - x[0])[0]?.[1] as string);
}

/** Per response (`message.id`, the largest usage of its lines), what the transcript records. */
async function nativeTotals(home: string): Promise<NativeTotals> {
  type Usage = Record<string, number>;
  const responses = new Map<string, Usage>();
  for (const line of (await readFile(await transcript(home), "utf8")).split("\n")) {
    if (line === "") continue;
    const record = JSON.parse(line) as { type?: string; message?: { id?: string; model?: string; usage?: Usage } };
    const usage = record.message?.usage;
    if (record.type !== "assistant" || !usage || record.message?.model === "<synthetic>") continue;
    responses.delete(record.message?.id ?? "");
    responses.set(record.message?.id ?? "", usage);
  }
  const prompt = (u: Usage) =>
    (u.input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0);
  const all = [...responses.values()];
  return {
    input: all.reduce((n, u) => n + prompt(u), 0),
    cached: all.reduce((n, u) => n + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0), 0),
    output: all.reduce((n, u) => n + (u.output_tokens ?? 0), 0),
    context: prompt(all.at(-1) ?? {}),
  };
}

/** The real Claude Code TUI: tokens, and the screen of a hit session limit. */
defineUsageScenario(claudeDriver, {
  nativeTotals: (prepared) => nativeTotals(prepared.home),
  record: async (prepared, path) => copyFile(await transcript(prepared.home), path),
  fixtures: join(REPO_ROOT, "services/node/agents/claude/fixtures/usage", claudeDriver.version),
  compact: { command: "/compact", done: (text) => /Compacted/i.test(text) },
  // With an API key (the only login that works against a mock) Claude Code prints a 429 as an API
  // error, even with the plan-limit headers: its "You've hit your session limit" is for claude.ai
  // logins. StarAgent must not call that error a hit plan limit.
  refusal: {
    title: "a 429 printed as an API error (an API-key login) is not reported as the plan's limit",
    limitReached: false,
    fixture: "api-error-429",
    error: FIVE_HOUR_LIMIT_HIT,
    screen: (text) => /API Error: Request rejected \(429\)/.test(text),
  },
});

/**
 * Logged in with a claude.ai token, the same 429 is the plan's limit: 2.1.332 prints "You've hit your
 * 5-hour limit · resets <time> (<zone>)" and logs `apiError: "usage_limit_reached"` with
 * `quotaLimits.resetsAt`, which StarAgent reports as `limit_reached` with that exact reset time.
 */
defineUsageScenario(claudePlanDriver, {
  nativeTotals: (prepared) => nativeTotals(prepared.home),
  // Only the plan limit's state: the other steps' fixtures are the API-key run's.
  record: async (prepared, path) => {
    if (basename(path) === "plan-limit.jsonl") await copyFile(await transcript(prepared.home), path);
  },
  fixtures: join(REPO_ROOT, "services/node/agents/claude/fixtures/usage", claudeDriver.version),
  refusal: {
    title: "a hit five-hour limit (a claude.ai login) is reported as the plan's limit, with its reset time",
    limitReached: true,
    resetsAtMs: RESET_S * 1000,
    fixture: "plan-limit",
    error: FIVE_HOUR_LIMIT_HIT,
    screen: (text) => /You['’]ve hit your 5-hour limit · resets/.test(text),
  },
});
