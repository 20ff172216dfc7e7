import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code } from "@connectrpc/connect";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Cli, PromptKind, SessionStatus, StatusReason } from "../../gen/staragent/v1/session_pb.js";
import { createTestTmux, type TestTmux } from "../../test/support/tmux.js";
import { waitFor } from "../../test/support/wait.js";
import { createLogger } from "../common/log.js";
import { Machine } from "./machine.js";
import type { SessionInspector, SessionObservation } from "./status/observation.js";
import { openStateFiles } from "./store/state-files.js";

/** An idle Claude Code session, as the status engine would report one. */
const claudeObservation: SessionObservation = {
  cli: Cli.CLAUDE,
  status: SessionStatus.IDLE,
  reason: StatusReason.NO_TURN,
  prompt: "",
  promptKind: PromptKind.UNSPECIFIED,
  completionId: "",
  detail: "test",
  command: "claude",
  chatRevision: "",
};

/** Reads made in a row while the machine is watched: each would be a full read of tmux without the model. */
const READS = 30;

describe("Machine reads while its watch loop runs", () => {
  let tmux: TestTmux;
  let home: string;
  let machine: Machine;
  let inspections: number;
  /** Ends the test's watcher; a fresh one per test (an aborted signal ends a watch at once). */
  let stop: AbortController;

  beforeEach(async () => {
    stop = new AbortController();
    tmux = createTestTmux();
    home = await realpath(await mkdtemp(join(tmpdir(), "sa-reads-")));
    inspections = 0;
    // Every session settled: the loop looks every 2 s, so reads made within that time meet one model.
    // Every pane runs Claude Code (as far as the machine is told), so every unmanaged session is adoptable.
    const counting: SessionInspector = {
      inspect: async (panes) => {
        inspections++;
        return new Map([...panes.keys()].map((name) => [name, claudeObservation]));
      },
      needsFastPoll: false,
    };
    const log = createLogger("test", "error");
    machine = new Machine({
      nodeName: "m1",
      tmux: tmux.client,
      state: openStateFiles(home, log),
      inspector: counting,
      log,
    });
  });

  afterEach(async () => {
    stop.abort();
    try {
      await machine?.close();
    } finally {
      await tmux.close();
      await rm(home, { recursive: true, force: true });
    }
  });

  /** Starts a watcher (the dashboard) and waits for its snapshot. */
  async function watch(): Promise<void> {
    let snapshot = false;
    void (async () => {
      for await (const _ of machine.watch(stop.signal)) snapshot = true;
    })();
    await waitFor(() => snapshot, "the snapshot");
  }

  it("answers lists and gets from the watch loop's model instead of reading tmux each time", async () => {
    await tmux.run("new-session", "-d", "-s", "idle", "sleep 600");
    await watch();
    const before = inspections;
    for (let i = 0; i < READS; i++) {
      expect((await machine.listSessions()).map((s) => s.tmuxSession)).toEqual(["idle"]);
      expect((await machine.getSession("idle")).tmuxSession).toBe("idle");
    }
    // At most the loop's own look may fall within the reads.
    expect(inspections - before).toBeLessThanOrEqual(1);
  });

  it("reads tmux for each read when nobody watches", async () => {
    await tmux.run("new-session", "-d", "-s", "idle", "sleep 600");
    const before = inspections;
    for (let i = 0; i < 3; i++) await machine.listSessions();
    expect(inspections - before).toBe(3);
  });

  it("shows sessions created and stopped through the API at once, and changes made by hand soon", async () => {
    await watch();
    await machine.createSession({ sessionId: "made", cwd: home, command: ["sleep", "600"] });
    expect((await machine.listSessions()).map((s) => s.tmuxSession)).toEqual(["made"]);
    await machine.stopSession("made", false);
    expect(await machine.listSessions()).toEqual([]);
    await expect(machine.getSession("made")).rejects.toMatchObject({ code: Code.NotFound });
    // tmux's server exits with its last session; a session made while it exits would meet it going.
    await waitFor(
      () =>
        tmux.run("list-sessions").then(
          () => false,
          () => true,
        ),
      "tmux's server to exit with its last session",
    );
    await tmux.run("new-session", "-d", "-s", "by-hand", "sleep 600");
    await waitFor(
      async () => (await machine.listSessions()).some((s) => s.tmuxSession === "by-hand"),
      "a session made by hand",
    );
  });

  it("finds a session started by hand by its name at once, before the watch loop has seen it", async () => {
    await watch();
    expect(await machine.listSessions()).toEqual([]);
    await tmux.run("new-session", "-d", "-s", "by-hand", "sleep 600");
    expect((await machine.getSession("by-hand")).tmuxSession).toBe("by-hand");
    await expect(machine.getSession("nowhere")).rejects.toMatchObject({ code: Code.NotFound });
  });

  it("lists an agent started by hand as adoptable at once, though the watch loop has not looked yet", async () => {
    await tmux.run("new-session", "-d", "-s", "idle", "sleep 600");
    const before = inspections;
    await watch();
    // The loop's own first look is done: its model (without the next session) is fresh for 2 s.
    await waitFor(() => inspections >= before + 2, "the watch loop's first look");
    await tmux.run("new-session", "-d", "-s", "by-hand", "sleep 600");
    expect((await machine.listAdoptable()).map((a) => a.tmuxSession)).toEqual(["by-hand", "idle"]);
  });
});
