import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { bindProcessLog, freshLog, isProcessOrChild, logSignals } from "./bound-log.js";
import { LogBinder } from "./log-binding.js";
import type { ProcessInfo } from "./process-table.js";

const proc = (pid: number, startTicks = 1): ProcessInfo => ({ pid, ppid: 1, comm: "cli", argv: ["cli"], startTicks });

/** The context of pane process `pid` with `siblings`, counting screen reads; `screen` is what it shows. */
function context(pid: number, siblings: ProcessInfo[], screen: string) {
  const reads = { count: 0 };
  return {
    reads,
    context: {
      process: proc(pid),
      siblings,
      visibleScreen: async () => {
        reads.count++;
        return screen;
      },
    },
  };
}

describe("bindProcessLog", () => {
  it("binds the only instance to the newest log without reading prompts or the screen", async () => {
    const { context: c, reads } = context(10, [], "");
    const prompts: string[] = [];
    const bound = await bindProcessLog(
      new LogBinder(),
      c,
      [
        { key: "/old.jsonl", updatedMs: 1 },
        { key: "/new.jsonl", updatedMs: 2 },
      ],
      (l) => {
        prompts.push(l.key);
        return "never asked";
      },
    );
    expect(bound.key).toBe("/new.jsonl");
    expect(prompts).toEqual([]);
    expect(reads.count).toBe(0);
  });

  it("with siblings in the folder, binds the log whose newest prompt is on this pane's screen", async () => {
    const { context: c, reads } = context(10, [proc(11)], "> fix the login page please\n");
    const bound = await bindProcessLog(
      new LogBinder(),
      c,
      [
        { key: "/a.jsonl", updatedMs: 2, prompt: "write the release notes" },
        { key: "/b.jsonl", updatedMs: 1, prompt: "fix the login page please" },
        { key: "/c.jsonl", updatedMs: 3, prompt: undefined },
      ],
      async (l) => l.prompt,
    );
    expect(bound).toEqual({ key: "/b.jsonl", how: "its newest prompt is on this pane's screen", screenRead: true });
    expect(reads.count).toBe(1);
  });

  it("takes a log the CLI names itself before any other", async () => {
    const { context: c } = context(10, [proc(11)], "");
    const bound = await bindProcessLog(new LogBinder(), c, [{ key: "/a.jsonl", updatedMs: 9 }], () => "x", {
      key: "/named.jsonl",
      how: "its --resume argument names the session",
    });
    expect(bound).toEqual({ key: "/named.jsonl", how: "its --resume argument names the session", screenRead: false });
  });
});

describe("isProcessOrChild", () => {
  it("knows the process itself and a child it started, not its parent or a pid that is gone", async () => {
    const self: ProcessInfo = { ...proc(process.pid), ppid: process.ppid };
    const child = spawn("sleep", ["30"], { stdio: "ignore" });
    try {
      await once(child, "spawn");
      expect(await isProcessOrChild(process.pid, self)).toBe(true);
      expect(await isProcessOrChild(child.pid ?? -1, self)).toBe(true);
      expect(await isProcessOrChild(process.ppid, self)).toBe(false);
      expect(await isProcessOrChild(2 ** 22 + 7, self)).toBe(false);
    } finally {
      child.kill();
    }
  });
});

describe("freshLog and logSignals", () => {
  const start = new Date(1_000_000);
  const words = { log: "session", none: "no session log", name: (p: string) => p.split("/").at(-1) ?? p };
  const log = (mtimeMs: number, turnStartedAt: number) => ({
    path: "/logs/s1.jsonl",
    mtimeMs,
    state: { turnStartedAt, decidedBy: "a reply with text", lastUserTurn: "u1", completionId: "c1" },
  });

  it("keeps a log written since the start whose turn is this run's", () => {
    const read = freshLog(log(start.getTime() + 5_000, start.getTime() + 1_000), start, "bound by pid", words);
    expect(read.fresh?.path).toBe("/logs/s1.jsonl");
    expect(read.earlier).toBe(false);
    expect(read.state?.completionId).toBe("c1");
    expect(read.detail).toBe("session s1.jsonl (bound by pid): a reply with text");
  });

  it("drops a log older than the process, and the state of a turn an earlier run opened", () => {
    const stale = freshLog(log(start.getTime() - 60_000, 0), start, "newest", words);
    expect(stale).toEqual({ fresh: undefined, earlier: false, state: undefined, detail: "no session log (newest)" });
    const resumed = freshLog(log(start.getTime() + 5_000, start.getTime() - 60_000), start, "named", words);
    expect(resumed.fresh).toBeDefined();
    expect(resumed.earlier).toBe(true);
    expect(resumed.state).toBeUndefined();
    expect(resumed.detail).toBe("session s1.jsonl (named): its newest turn predates this process");
    expect(freshLog(undefined, start, "none written", words).detail).toBe("no session log (none written)");
  });

  it("gives a completed turn its completion id and the chat view the log's path", () => {
    const state = { lastUserTurn: "u1", completionId: "c1" };
    const base = { fresh: { mtimeMs: 5 }, state, prompt: undefined, details: ["a", "b"], usage: undefined };
    const done = logSignals({ ...base, turn: "completed", path: "/l.jsonl", how: "named", statePath: "/logs" });
    expect(done).toMatchObject({
      turn: "completed",
      completionId: "c1",
      detail: "a; b",
      lastActivity: new Date(5),
      lastUserTurn: "u1",
      hasNativeLog: true,
      chatLog: { path: "/l.jsonl", session: "" },
      chatLogDetail: "named",
      statePaths: ["/logs"],
    });
    const active = logSignals({
      ...base,
      turn: "active",
      fresh: undefined,
      path: undefined,
      how: "x",
      statePath: "/f",
    });
    expect(active.completionId).toBe("");
    expect(active.chatLog).toBeUndefined();
    expect(active.lastActivity).toBeUndefined();
  });
});
