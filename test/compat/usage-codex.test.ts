import { copyFile, readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { REPO_ROOT } from "../support/servers.js";
import { codexDriver } from "./codex-driver.js";
import { defineUsageScenario, type NativeTotals } from "./usage-scenario.js";

/** When the mock's rate-limit windows and its refused request say the limits reset (seconds since the epoch). */
const PRIMARY_RESET_S = Math.floor(Date.now() / 1000) + 2 * 3600;
const SECONDARY_RESET_S = Math.floor(Date.now() / 1000) + 5 * 86_400;

/** The instance's one rollout. */
async function rollout(home: string): Promise<string> {
  const sessions = join(home, ".codex", "sessions");
  const rollouts = (await readdir(sessions, { recursive: true })).filter((f) => /rollout-.*\.jsonl$/.test(f));
  if (rollouts.length !== 1) throw new Error(`expected one rollout, found ${rollouts.join(", ")}`);
  return join(sessions, rollouts[0] as string);
}

/** The newest `token_count` of the instance's rollout: the totals Codex itself keeps. */
async function nativeTotals(home: string): Promise<NativeTotals> {
  const records = (await readFile(await rollout(home), "utf8"))
    .split("\n")
    .filter((l) => l !== "")
    .map(
      (l) =>
        JSON.parse(l) as {
          type?: string;
          payload?: { type?: string; info?: Record<string, Record<string, number>> | null };
        },
    );
  const info = records
    .filter((r) => r.type === "event_msg" && r.payload?.type === "token_count" && r.payload.info)
    .at(-1)?.payload?.info;
  const total = info?.total_token_usage ?? {};
  return {
    input: total.input_tokens ?? -1,
    cached: total.cached_input_tokens ?? -1,
    output: total.output_tokens ?? -1,
    context: info?.last_token_usage?.input_tokens ?? -1,
  };
}

/** The real Codex TUI: tokens, the plan's rate-limit windows from the response headers, a hit limit. */
defineUsageScenario(codexDriver, {
  nativeTotals: (prepared) => nativeTotals(prepared.home),
  record: async (prepared, path) => copyFile(await rollout(prepared.home), path),
  fixtures: join(REPO_ROOT, "services/node/agents/codex/fixtures/usage", codexDriver.version),
  rateLimits: {
    headers: {
      "x-codex-primary-used-percent": "42.5",
      "x-codex-primary-window-minutes": "300",
      "x-codex-primary-reset-at": String(PRIMARY_RESET_S),
      "x-codex-secondary-used-percent": "7",
      "x-codex-secondary-window-minutes": "10080",
      "x-codex-secondary-reset-at": String(SECONDARY_RESET_S),
    },
    expected: [
      { name: "5h", usedPercent: 42.5, resetsAtMs: PRIMARY_RESET_S * 1000, windowMinutes: 300 },
      { name: "weekly", usedPercent: 7, resetsAtMs: SECONDARY_RESET_S * 1000, windowMinutes: 10_080 },
    ],
  },
  compact: { command: "/compact", done: (text) => /compacted/i.test(text) },
  refusal: {
    title: "a request refused for the plan's limit shows limit_reached and names it in the status detail",
    limitReached: true,
    fixture: "limit-reached",
    error: {
      status: 429,
      body: {
        error: {
          type: "usage_limit_reached",
          message: "The usage limit has been reached",
          plan_type: "plus",
          resets_at: PRIMARY_RESET_S,
        },
      },
    },
    screen: (text) => /hit your usage limit/.test(text),
  },
});
