import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { codexDriver } from "./codex-driver.js";
import { defineCompatScenario } from "./compat-scenario.js";

/** The real Codex TUI in a Hub's tmux, against the mock model: status and chat at every step. */
defineCompatScenario(codexDriver, (facts) => {
  it("names the completion by the turn id Codex wrote in its rollout", async () => {
    const home = facts.prepared?.home ?? "";
    const sessions = join(home, ".codex", "sessions");
    const rollouts = (await readdir(sessions, { recursive: true })).filter((f) => /rollout-.*\.jsonl$/.test(f));
    expect(rollouts).toHaveLength(1);
    const lines = (await readFile(join(sessions, rollouts[0] ?? ""), "utf8")).split("\n").filter((l) => l !== "");
    const completed = lines
      .map((l) => JSON.parse(l) as { type?: string; payload?: { type?: string; turn_id?: string } })
      .filter((r) => r.type === "event_msg" && r.payload?.type === "task_complete")
      .map((r) => r.payload?.turn_id);
    expect(completed).toHaveLength(1);
    expect(facts.completionId).toBe(completed[0]);
  });
});
