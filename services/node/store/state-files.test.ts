import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { eachTempDir } from "../../../test/support/temp-dir.js";
import { createLogger } from "../../common/log.js";
import { openStateFiles } from "./state-files.js";

describe("state files", () => {
  let home: string;
  eachTempDir("sa-state-", (made) => (home = made));
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

  it("reads entries written without the optional fields, and logs where a bad file is wrong", async () => {
    await writeFile(join(home, "adopted_sessions.json"), '{"sessions":[{"tmuxSession":"a","sessionCreated":5}]}');
    expect((await open().adopted.read()).sessions).toEqual([
      { tmuxSession: "a", sessionCreated: 5, adoptTime: "", cli: "" },
    ]);
    await writeFile(join(home, "seen.json"), '{"seen":[{"tmuxSession":"a","completionId":7}]}');
    const lines: string[] = [];
    await openStateFiles(
      home,
      createLogger("store", "warn", (l) => lines.push(l)),
    ).seen.read();
    expect(lines.join("\n")).toContain(
      "seen.json at seen.0.completionId: Invalid type: Expected string but received 7",
    );
  });
});
