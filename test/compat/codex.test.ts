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
    // One thread per TUI; the resumed ones keep writing the first instance's rollout.
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
    const firstIds = ["compat-codex-a", "compat-codex-a-resumed", "compat-codex-a-by-id"];
    const first = firstIds.flatMap((id) => completions.get(id) ?? []);
    const second = [...(completions.get("compat-codex-b") ?? [])].sort();
    // The turn a queued prompt followed ended unreported (the prompt was typed at once): one id more.
    const unreported = firstIds.reduce((n, id) => n + (facts.unobserved.get(id) ?? 0), 0);
    const ofSecond = perRollout.filter((ids) => JSON.stringify(ids) === JSON.stringify(second));
    const ofFirst = perRollout.filter((ids) => JSON.stringify(ids) !== JSON.stringify(second));
    expect(ofSecond).toHaveLength(1);
    expect(ofFirst).toHaveLength(1);
    expect(ofFirst[0]).toEqual(expect.arrayContaining(first));
    expect(ofFirst[0]).toHaveLength(first.length + unreported);
  });
});
