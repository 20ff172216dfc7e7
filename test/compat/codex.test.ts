import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { codexDriver } from "./codex-driver.js";
import { defineCompatScenario } from "./compat-scenario.js";

/** The real Codex TUI in a Hub's tmux, against the mock model: status and chat at every step. */
defineCompatScenario(codexDriver, (facts) => {
  it("names each completion by the turn id Codex wrote in that instance's own rollout", async () => {
    const home = facts.prepared?.home ?? "";
    const sessions = join(home, ".codex", "sessions");
    const rollouts = (await readdir(sessions, { recursive: true })).filter((f) => /rollout-.*\.jsonl$/.test(f));
    // One thread per TUI; the resumed one keeps writing the first instance's rollout.
    expect(rollouts).toHaveLength(2);
    const completedIn = async (file: string) =>
      (await readFile(join(sessions, file), "utf8"))
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l) as { type?: string; payload?: { type?: string; turn_id?: string } })
        .filter((r) => r.type === "event_msg" && r.payload?.type === "task_complete")
        .map((r) => r.payload?.turn_id ?? "");
    const perRollout = (await Promise.all(rollouts.map(completedIn))).map((ids) => [...ids].sort());
    const completions = facts.completions;
    const first = [...(completions.get("compat-codex-a") ?? []), ...(completions.get("compat-codex-a-resumed") ?? [])];
    const second = completions.get("compat-codex-b") ?? [];
    expect(perRollout.sort((x, y) => x.length - y.length || (x[0] ?? "").localeCompare(y[0] ?? ""))).toEqual(
      [second.sort(), first.sort()].sort((x, y) => x.length - y.length || (x[0] ?? "").localeCompare(y[0] ?? "")),
    );
  });
});
