import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLogger } from "../../common/log.js";
import { openStateFiles } from "./state-files.js";

describe("state files", () => {
  let home: string;
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), "sa-state-"));
  });
  afterEach(async () => {
    await rm(home, { recursive: true, force: true });
  });
  const open = () => openStateFiles(home, createLogger("store", "error"));

  it("round-trips adopted sessions and seen completions in $STARAGENT_HOME", async () => {
    const state = open();
    await state.adopted.update((f) => ({
      ...f,
      sessions: [{ tmuxSession: "a", sessionCreated: 1700000000, adoptTime: "2026-01-01T00:00:00Z", cli: "codex" }],
    }));
    await state.seen.update((f) => ({
      ...f,
      seen: [{ tmuxSession: "a", completionId: "turn-1", seenTime: "2026-01-01T00:00:00Z" }],
    }));
    const again = open();
    expect((await again.adopted.read()).sessions).toEqual([
      { tmuxSession: "a", sessionCreated: 1700000000, adoptTime: "2026-01-01T00:00:00Z", cli: "codex" },
    ]);
    expect((await again.seen.read()).seen.map((e) => e.completionId)).toEqual(["turn-1"]);
    expect(JSON.parse(await readFile(join(home, "seen.json"), "utf8")).version).toBe(1);
  });

  it.each([
    ["adopted_sessions.json", "adopted", '{"version":1,"sessions":[{"tmuxSession":3}]}', { version: 1, sessions: [] }],
    ["adopted_sessions.json", "adopted", "garbage", { version: 1, sessions: [] }],
    ["seen.json", "seen", '{"version":1,"seen":{}}', { version: 1, seen: [] }],
    ["seen.json", "seen", '{"version":1,"seen":[{"tmuxSession":"a"}]}', { version: 1, seen: [] }],
  ] as const)("keeps a corrupt %s aside and replaces it", async (name, which, content, empty) => {
    await writeFile(join(home, name), content);
    expect(await open()[which].read()).toEqual(empty);
    const aside = (await readdir(home)).filter((n) => n.startsWith(`${name}.corrupt-`));
    expect(aside).toHaveLength(1);
    expect(await readFile(join(home, aside[0] ?? ""), "utf8")).toBe(content);
  });
});
