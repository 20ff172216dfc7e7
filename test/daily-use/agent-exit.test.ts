import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Cli, SessionStatus } from "../../gen/staragent/v1/session_pb.js";
import { type HubFixture, startHubFixture } from "../foundation/hub-fixture.js";
import { waitFor } from "../support/wait.js";

/**
 * A session StarAgent created keeps its pane when the command in it exits (an agent's `/exit`, a
 * crash, a Ctrl-C): the pane becomes a login shell in the same folder and the Session says how the
 * command ended (`exit_status`). Through a real Hub on a private tmux server.
 */
describe("a created session whose command exits", () => {
  let f: HubFixture;
  let home: string;
  beforeAll(async () => {
    // The login shell each pane becomes is /bin/sh in a home of its own: never the user's shell and
    // its startup files (a login bash running ~/.bashrc can wait a minute on a lock another killed
    // shell left, as pyenv's rehash does).
    home = await realpath(await mkdtemp(join(tmpdir(), "sa-agent-exit-")));
    f = await startHubFixture({ env: { ...process.env, HOME: home, SHELL: "/bin/sh" } });
  });
  afterAll(async () => {
    await f?.close();
    await rm(home, { recursive: true, force: true });
  });

  const session = async (id: string) => (await f.sessions.getSession({ name: `nodes/local/sessions/${id}` })).session;
  /** The exit status a session reports once its command has exited. */
  const exitStatusOf = (id: string) => waitFor(async () => (await session(id))?.exitStatus, `the exit status of ${id}`);
  const screen = (id: string) => f.tmux.run("capture-pane", "-p", "-t", `=${id}:`);

  it("stays, with the exit status, and its pane is a shell in the same folder", async () => {
    // The command reads a line, then exits 3: it ends when the test says, not on a timer.
    const command = ["sh", "-c", "read line; exit 3"];
    const created = await f.sessions.createSession({ parent: "nodes/local", sessionId: "ends", cwd: f.dir, command });
    expect(created.session?.exitStatus).toBeUndefined();
    await f.tmux.run("send-keys", "-t", "=ends:", "-l", "go");
    await f.tmux.run("send-keys", "-t", "=ends:", "Enter");
    expect(await exitStatusOf("ends")).toBe(3);
    await waitFor(async () => (await screen("ends")).includes("[sh exited with status 3;"), "the exit line");
    // The pane is a shell now, in the session's folder.
    await f.tmux.run("send-keys", "-t", "=ends:", "-l", "pwd > where.txt");
    await f.tmux.run("send-keys", "-t", "=ends:", "Enter");
    const { readFile } = await import("node:fs/promises");
    const where = await waitFor(
      async () => (await readFile(`${f.dir}/where.txt`, "utf8").catch(() => "")).trim() || undefined,
      "the shell to answer",
    );
    expect(where).toBe(f.dir);
    expect((await f.sessions.listSessions({ parent: "nodes/local" })).sessions.map((s) => s.tmuxSession)).toContain(
      "ends",
    );
  });

  it("resumes a command that suspends itself (a TUI's Ctrl-Z) instead of taking it for ended", async () => {
    // What a full-screen CLI does on Ctrl-Z: it stops its own process group. Nothing in the pane could
    // ever `fg` it again; the wrapper resumes it, and only its real exit counts.
    const command = [
      "sh",
      "-c",
      "kill -TSTP $$; echo resumed once; kill -STOP $$; echo resumed twice; read line; exit 4",
    ];
    await f.sessions.createSession({ parent: "nodes/local", sessionId: "suspends", cwd: f.dir, command });
    await waitFor(async () => (await screen("suspends")).includes("resumed twice"), "the command to run on");
    const text = await screen("suspends");
    expect(text).not.toContain("exited with status");
    expect(text).not.toContain("Stopped");
    expect((await session("suspends"))?.exitStatus).toBeUndefined();
    await f.tmux.run("send-keys", "-t", "=suspends:", "-l", "go");
    await f.tmux.run("send-keys", "-t", "=suspends:", "Enter");
    expect(await exitStatusOf("suspends")).toBe(4);
  });

  it("keeps the pane when Ctrl-C ends the command, with 130 as its status", async () => {
    await f.sessions.createSession({
      parent: "nodes/local",
      sessionId: "interrupted",
      cwd: f.dir,
      command: ["sleep", "600"],
    });
    await waitFor(
      async () =>
        (await f.tmux.run("list-panes", "-t", "=interrupted:", "-F", "#{pane_current_command}")).trim() === "sleep",
      "sleep to run",
    );
    await f.tmux.run("send-keys", "-t", "=interrupted:", "C-c");
    expect(await exitStatusOf("interrupted")).toBe(130);
    await waitFor(
      async () => (await screen("interrupted")).includes("[sleep exited with status 130;"),
      "the exit line",
    );
  });

  it("reads a shell started as the session's command as the shell, not as a command running in the wrapper", async () => {
    await f.sessions.createSession({
      parent: "nodes/local",
      sessionId: "bash-here",
      cwd: f.dir,
      command: ["bash", "--norc", "--noprofile"],
    });
    const idle = await waitFor(async () => {
      const s = await session("bash-here");
      return s?.cli === Cli.SHELL && s.status === SessionStatus.IDLE && s;
    }, "bash at its prompt, idle");
    expect(idle.exitStatus).toBeUndefined();
    await f.tmux.run("send-keys", "-t", "=bash-here:", "-l", "sleep 600");
    await f.tmux.run("send-keys", "-t", "=bash-here:", "Enter");
    await waitFor(async () => (await session("bash-here"))?.status === SessionStatus.WORKING, "the command to run");
  });
});
