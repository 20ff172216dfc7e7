import { mkdir, mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatRole } from "../../gen/staragent/v1/session_pb.js";
import { NEXT_COMMAND } from "../../services/node/tmux/client.js";
import { failureOf, type HubFixture, startHubFixture } from "../foundation/hub-fixture.js";
import { REPO_ROOT } from "../support/servers.js";
import { waitFor } from "../support/wait.js";

const STAND_INS = join(REPO_ROOT, "test/stand-ins");

/**
 * A session whose last process ends (the agent exited, then the shell its pane became) is kept as
 * ended: listed with `Session.ended` (when, the exit status, the last lines), its chat readable,
 * until a person dismisses it with StopSession, or the machine's keep time has passed. Through a
 * real Hub process on a private tmux server, with the claude stand-in.
 */
describe("ended sessions", () => {
  let f: HubFixture;
  let quick: HubFixture;
  let home: string;

  beforeAll(async () => {
    home = await realpath(await mkdtemp(join(tmpdir(), "sa-ended-")));
    await mkdir(join(home, "user"));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      HOME: join(home, "user"),
      PATH: `${STAND_INS}:${process.env.PATH}`,
      SHELL: "/bin/sh",
      STANDIN_THINK_MS: "50",
      STANDIN_TURN_MS: "200",
      CLAUDE_CONFIG_DIR: "",
    };
    f = await startHubFixture({ env });
    // 0.001 h: an ended session StarAgent created goes after 3.6 s.
    quick = await startHubFixture({ env: { ...env, STARAGENT_KEEP_ENDED_HOURS: "0.001" } });
  });
  afterAll(async () => {
    await f?.close();
    await quick?.close();
    await rm(home, { recursive: true, force: true });
  });

  it("keeps a session whose agent and then shell exited, with how it ended and its chat, until dismissed", async () => {
    const name = "nodes/local/sessions/finished";
    await f.sessions.createSession({ parent: "nodes/local", sessionId: "finished", cwd: f.dir, command: ["claude"] });
    await waitFor(
      async () => (await f.tmux.run("capture-pane", "-p", "-t", "=finished:")).includes("? for shortcuts"),
      "the claude stand-in's input box",
    );
    await f.sessions.sendChatMessage({ name, text: "remember this" });
    await waitFor(
      async () => (await f.sessions.getChat({ name })).messages.some((m) => m.text === "Done: remember this"),
      "the answer",
    );
    // The agent exits (Ctrl-C twice), its pane becomes a shell; then the shell exits with 7.
    await f.tmux.run("send-keys", "-t", "=finished:", "C-c");
    await f.tmux.run("send-keys", "-t", "=finished:", "C-c");
    await waitFor(async () => (await f.sessions.getSession({ name })).session?.exitStatus === 0, "the agent's exit");
    expect((await f.sessions.getSession({ name })).session?.ended).toBeUndefined();
    await f.tmux.run("send-keys", "-t", "=finished:", "-l", "echo last words; exit 7");
    await f.tmux.run("send-keys", "-t", "=finished:", "Enter");

    const ended = await waitFor(async () => {
      const res = await f.sessions.listSessions({ parent: "nodes/local" });
      return res.sessions.find((s) => s.tmuxSession === "finished" && s.ended?.exitStatus !== undefined);
    }, "the session listed as ended, with its exit status");
    expect(ended.ended?.exitStatus).toBe(7);
    expect(ended.exitStatus).toBe(0);
    expect(Number(ended.ended?.endTime?.seconds)).toBeGreaterThan(Date.now() / 1000 - 60);
    expect(ended.ended?.lastLines).toContain("last words");
    expect(ended.ended?.lastLines.some((l) => l.startsWith("[claude exited with status 0;"))).toBe(true);
    expect(ended.ended?.lastLines.some((l) => l.startsWith("Pane is dead"))).toBe(false);
    // Its chat is still there, read from the native log.
    const chat = await f.sessions.getChat({ name });
    expect(chat.messages.filter((m) => m.role !== ChatRole.SYSTEM).map((m) => m.text)).toEqual(
      expect.arrayContaining(["remember this", "Done: remember this"]),
    );

    // Nothing can be typed into it; it says so.
    expect(await failureOf(f.sessions.sendChatMessage({ name, text: "anyone there?" }))).toEqual({
      code: "FailedPrecondition",
      message:
        "finished has ended (its last process exited with status 7), so nothing was typed: start a new session, or dismiss this one with StopSession",
    });

    // Dismissed by a person: gone, and only then.
    await f.sessions.stopSession({ name });
    expect((await f.sessions.listSessions({ parent: "nodes/local" })).sessions.map((s) => s.tmuxSession)).not.toContain(
      "finished",
    );
    expect(await failureOf(f.sessions.getSession({ name }))).toMatchObject({ code: "NotFound" });
  });

  it("removes an ended session it created once the keep time has passed, and never one made by hand", async () => {
    await quick.sessions.createSession({
      parent: "nodes/local",
      sessionId: "brief",
      cwd: quick.dir,
      command: ["sh", "-c", "exit 4"],
    });
    // A session made by hand that keeps its dead pane too: listed as ended, never removed.
    await quick.tmux.run(
      "new-session",
      "-d",
      "-s",
      "by-hand",
      "sh -c 'read line; exit 5'",
      NEXT_COMMAND,
      "set-option",
      "-w",
      "-t",
      "=by-hand:",
      "remain-on-exit",
      "on",
    );
    await quick.tmux.run("send-keys", "-t", "=by-hand:", "Enter");
    await quick.tmux.run("send-keys", "-t", "=brief:", "-l", "exit");
    await quick.tmux.run("send-keys", "-t", "=brief:", "Enter");
    const both = await waitFor(async () => {
      const res = await quick.sessions.listSessions({ parent: "nodes/local" });
      const ended = res.sessions.filter((s) => s.ended);
      return ended.length === 2 && ended;
    }, "both sessions listed as ended");
    const created = both.find((s) => s.tmuxSession === "brief");
    expect(created?.exitStatus).toBe(4);
    const diedAt = Number(created?.ended?.endTime?.seconds) * 1000;
    const gone = await waitFor(
      async () => {
        const res = await quick.sessions.listSessions({ parent: "nodes/local" });
        return !res.sessions.some((s) => s.tmuxSession === "brief") && Date.now();
      },
      "the created session to go after its keep time",
      15_000,
    );
    // The keep time did it: not before 3.6 s after it ended (tmux says when to the second).
    expect(gone - diedAt).toBeGreaterThanOrEqual(3_600 - 1_000);
    expect(await quick.tmux.run("list-sessions", "-F", "#{session_name}")).not.toContain("brief");
    const byHand = (await quick.sessions.listSessions({ parent: "nodes/local" })).sessions.find(
      (s) => s.tmuxSession === "by-hand",
    );
    expect(byHand?.ended?.exitStatus).toBe(5);
  });
});
