import { mkdtemp, readFile, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import * as pty from "node-pty";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SessionOrigin, SessionType } from "../../gen/staragent/v1/session_pb.js";
import { WatchEventType } from "../../gen/staragent/v1/session_service_pb.js";
import { outcomeOf } from "../../test/support/codes.js";
import { createTestTmux, type TestTmux } from "../../test/support/tmux.js";
import { waitFor } from "../../test/support/wait.js";
import { createLogger } from "../common/log.js";
import { Machine } from "./machine.js";
import type { SessionInspector } from "./status/observation.js";
import { openStateFiles } from "./store/state-files.js";

/** Tries of a race that tmux loses about one time in five on our machines. */
const QUICK_EXIT_ATTEMPTS = 10;

/** An inspector that observes nothing: these tests are about sessions, not status. */
const noStatus: SessionInspector = { inspect: async () => new Map() };

const codeOf = outcomeOf;

describe("Machine over a private tmux server", () => {
  let tmux: TestTmux;
  let home: string;
  let cwd: string;
  let machine: Machine;
  beforeEach(async () => {
    tmux = createTestTmux();
    home = await mkdtemp(join(tmpdir(), "sa-machine-"));
    cwd = await realpath(home);
    const log = createLogger("test", "error");
    machine = new Machine({
      nodeName: "m1",
      tmux: tmux.client,
      state: openStateFiles(home, log),
      inspector: noStatus,
      log,
    });
  });
  afterEach(async () => {
    try {
      await machine?.close();
    } finally {
      await tmux.close();
      await rm(home, { recursive: true, force: true });
    }
  });

  it("returns a session it just created even while a read that predates it is in flight", async () => {
    await tmux.run("new-session", "-d", "-s", "base", "sleep 600");
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let blocked = false;
    // The first read stops in the inspector (after listing tmux) until the new session is created.
    const gated: SessionInspector = {
      inspect: async () => {
        if (!blocked) {
          blocked = true;
          await gate;
        }
        return new Map();
      },
    };
    // The gate opens when createSession logs its success, just before it reads the sessions again.
    const log = createLogger("test", "info", (line) => {
      if (line.includes("session created")) release();
    });
    const raced = new Machine({
      nodeName: "m1",
      tmux: tmux.client,
      state: openStateFiles(home, log),
      inspector: gated,
      log,
    });
    try {
      const stale = raced.listSessions();
      await waitFor(() => blocked, "the first read to reach the inspector");
      const created = await raced.createSession({ sessionId: "fresh", cwd, command: ["sleep", "600"] });
      expect(created.tmuxSession).toBe("fresh");
      expect((await stale).map((s) => s.tmuxSession)).toEqual(["base"]);
    } finally {
      await raced.close();
    }
  });

  it("lists nothing when no tmux server runs", async () => {
    expect(await machine.listSessions()).toEqual([]);
  });

  it("reports the pane's last output as the last activity, not a viewer attaching", async () => {
    await tmux.run("new-session", "-d", "-s", "quiet", "-x", "80", "-y", "24", "sleep 600");
    const times = async () => {
      const [window = "", session = ""] = (
        await tmux.run("display-message", "-p", "-t", "=quiet:", "#{window_activity} #{session_activity}")
      )
        .trim()
        .split(" ");
      return { window: Number(window), session: Number(session) };
    };
    const created = await times();
    // A viewer attaches in a later ten-second step: tmux moves the session's activity, not the window's.
    await waitFor(() => Math.floor(Date.now() / 10_000) > Math.floor(created.session / 10), "the next step", 12_000);
    const viewer = pty.spawn("tmux", tmux.client.argv(["attach-session", "-t", "=quiet"]), {
      cols: 80,
      rows: 24,
      env: { ...tmux.client.environment, TERM: "xterm-256color" },
    });
    try {
      await waitFor(async () => (await times()).session > created.session, "tmux to see the viewer");
      const now = await times();
      expect(now.window).toBe(created.window);
      const session = await machine.getSession("quiet");
      expect(Number(session.lastActivityTime?.seconds)).toBe(created.window - (created.window % 10));
    } finally {
      viewer.kill();
    }
  }, 20_000);

  it("tells created, unmanaged and system sessions apart", async () => {
    await machine.createSession({ sessionId: "made", cwd, command: ["sleep", "600"] });
    await tmux.run("new-session", "-d", "-s", "found", "sleep 600");
    await tmux.run("new-session", "-d", "-s", "staragent-tailscaled", "sleep 600");
    const sessions = await machine.listSessions();
    expect(sessions.map((s) => [s.name, s.type, s.origin])).toEqual([
      ["nodes/m1/sessions/found", SessionType.AGENT, SessionOrigin.UNMANAGED],
      ["nodes/m1/sessions/made", SessionType.AGENT, SessionOrigin.CREATED],
      ["nodes/m1/sessions/staragent-tailscaled", SessionType.SYSTEM, SessionOrigin.SYSTEM],
    ]);
    expect(sessions[1]?.cwd).toBe(cwd);
  });

  it("lists a session no call can name with the reason and what to do, and every other one without", async () => {
    await tmux.run("new-session", "-d", "-s", "odd name", "sleep 600");
    await tmux.run("new-session", "-d", "-s", "plain-name", "sleep 600");
    const sessions = await machine.listSessions();
    expect(sessions.map((s) => [s.tmuxSession, s.unmanageableReason !== ""])).toEqual([
      ["odd name", true],
      ["plain-name", false],
    ]);
    expect(sessions[0]?.unmanageableReason).toMatch(/rename it in tmux \(tmux rename-session\)/);
  });

  it("remembers an adoption only for the tmux session adopted, not a later one of the same name", async () => {
    await tmux.run("new-session", "-d", "-s", "reused", "sleep 600");
    expect((await machine.adoptSession("reused")).origin).toBe(SessionOrigin.ADOPTED);
    expect((await machine.adoptSession("reused")).origin).toBe(SessionOrigin.ADOPTED);
    const created = Number((await tmux.run("display-message", "-p", "-t", "=reused:", "#{session_created}")).trim());
    await tmux.run("kill-session", "-t", "=reused");
    // tmux times sessions in whole seconds: the new session must be born in a later one.
    await waitFor(() => Math.floor(Date.now() / 1000) > created, "the next second");
    await tmux.run("new-session", "-d", "-s", "reused", "sleep 600");
    expect((await machine.getSession("reused")).origin).toBe(SessionOrigin.UNMANAGED);
    const file = JSON.parse(await readFile(join(home, "adopted_sessions.json"), "utf8"));
    expect(file.sessions.map((s: { tmuxSession: string }) => s.tmuxSession)).toEqual(["reused"]);
  });

  it("refuses adoption of created and system sessions", async () => {
    await machine.createSession({ sessionId: "made", cwd, command: ["sleep", "600"] });
    await tmux.run("new-session", "-d", "-s", "staragent-hub", "sleep 600");
    expect(await codeOf(machine.adoptSession("made"))).toBe("FailedPrecondition");
    expect(await codeOf(machine.adoptSession("staragent-hub"))).toBe("FailedPrecondition");
    expect(await codeOf(machine.adoptSession("ghost"))).toBe("NotFound");
  });

  it("answers a command that exits at once without an internal error, also while tmux's server exits", async () => {
    // With no other session the server exits with the command, racing the listing that follows: the
    // answer is FAILED_PRECONDITION, or the session when tmux listed it before the command ended.
    // Each answer is checked for what it claims: the session named, or the exit said in words.
    for (let i = 0; i < QUICK_EXIT_ATTEMPTS; i++) {
      const sessionId = `quick-${i}`;
      try {
        const session = await machine.createSession({ sessionId, cwd, command: ["true"] });
        expect(session.tmuxSession).toBe(sessionId);
      } catch (err) {
        const e = ConnectError.from(err);
        expect(`${Code[e.code]}: ${e.rawMessage}`).toBe(
          `FailedPrecondition: the command of ${sessionId} exited at once, so the session ended: check the command and cwd`,
        );
      }
    }
  });

  it.each([
    ["a NUL in an argument", ["sleep", "6\u00000"]],
    ["an empty program name", ["", "x"]],
  ])("refuses %s with INVALID_ARGUMENT naming command", async (_what, command) => {
    const call = machine.createSession({ sessionId: "bad", cwd, command });
    await expect(call).rejects.toMatchObject({
      code: Code.InvalidArgument,
      rawMessage: expect.stringMatching(/^command: /),
    });
  });

  it("starts tmux's default shell when the command is empty", async () => {
    const session = await machine.createSession({ sessionId: "shell", cwd, command: [] });
    expect(session.origin).toBe(SessionOrigin.CREATED);
  });

  it("streams a snapshot, then its own changes, and ends the stream on close", async () => {
    await tmux.run("new-session", "-d", "-s", "before", "sleep 600");
    const abort = new AbortController();
    const events: { type: WatchEventType; names: string[] }[] = [];
    const watching = (async () => {
      for await (const e of machine.watch(abort.signal)) {
        events.push({ type: e.type, names: [...e.sessions.map((s) => s.tmuxSession), ...e.removedNames] });
      }
      return "ended";
    })();
    await waitFor(() => events.length > 0, "the snapshot");
    await machine.createSession({ sessionId: "during", cwd, command: ["sleep", "600"] });
    await waitFor(
      () => events.some((e) => e.type === WatchEventType.UPSERTED && e.names.includes("during")),
      "UPSERTED",
    );
    await machine.stopSession("during", false);
    await waitFor(
      () => events.some((e) => e.type === WatchEventType.REMOVED && e.names.includes("nodes/m1/sessions/during")),
      "REMOVED",
    );
    expect(events[0]).toEqual({ type: WatchEventType.SNAPSHOT, names: ["before"] });
    await machine.close();
    expect(await watching).toBe("ended");
  });
});
