import { readdir, readFile, readlink } from "node:fs/promises";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionService, WatchEventType } from "../../gen/staragent/v1/session_service_pb.js";
import { TerminalStream } from "../../gen/staragent/v1/terminal_stream_pb.js";
import { bearerInterceptor } from "../../services/common/bearer.js";
import { isCommandShell } from "../../services/common/command-shell.js";
import { failureOf, testToken } from "../foundation/hub-fixture.js";
import { readWatch } from "../foundation/watch-events.js";
import { type ServerProcess, startServerProcess } from "../support/servers.js";
import { TestViewer } from "../support/test-viewer.js";
import { createTestTmux, type TestTmux } from "../support/tmux.js";
import { waitFor } from "../support/wait.js";

/**
 * File descriptors and child processes of a process: what a leak would grow. The long-lived shells
 * the Node runs its periodic commands through (CommandShell: the pane lister, the workspace's git)
 * are counted apart: they stay, one each at most.
 */
async function footprint(pid: number): Promise<{ fds: number; ptys: number; children: number; shells: number }> {
  const fds = await readdir(`/proc/${pid}/fd`);
  let ptys = 0;
  let counted = 0;
  for (const fd of fds) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => "");
    if (target === "/dev/ptmx" || target.startsWith("/dev/pts/")) ptys++;
    // libuv opens one inotify instance per process at its first file watch (a session folder in a git
    // repository is watched for changed files) and keeps it: one descriptor, not one per watch.
    if (target !== "anon_inode:inotify") counted++;
  }
  const children = (await readFile(`/proc/${pid}/task/${pid}/children`, "utf8")).trim();
  let shells = 0;
  let others = 0;
  for (const child of children === "" ? [] : children.split(/\s+/)) {
    const argv = (await readFile(`/proc/${child}/cmdline`, "utf8").catch(() => "")).split("\0").slice(0, -1);
    if (isCommandShell(argv)) shells++;
    else others++;
  }
  return { fds: counted, ptys, children: others, shells };
}

/** The pid of a tmux server, from tmux itself. */
async function serverPid(tmux: TestTmux): Promise<number> {
  return Number((await tmux.run("display-message", "-p", "#{pid}")).trim());
}

describe("a Node whose tmux server is killed and started again", () => {
  let tmux: TestTmux;
  let node: ServerProcess;
  beforeAll(async () => {
    tmux = createTestTmux();
    node = await startServerProcess({
      kind: "node",
      tmuxSocket: tmux.socketName,
      token: testToken(),
      args: ["--name", "n1"],
    });
  });
  afterAll(async () => {
    await node?.stop();
    await tmux?.close();
  });

  it("lists, watches, creates and attaches again, with nothing leaked and no INTERNAL", async () => {
    // One connection for both services, so the descriptors counted are the Node's own.
    const transport = createGrpcTransport({ baseUrl: node.url, interceptors: [bearerInterceptor(node.token)] });
    const sessions = createClient(SessionService, transport);
    const terminal = createClient(TerminalStream, transport);
    const pid = node.process.pid ?? 0;
    const dir = node.home;
    await sessions.createSession({ parent: "nodes/n1", sessionId: "before", cwd: dir, command: ["sleep", "600"] });
    const idle = await footprint(pid);
    const watch = readWatch((signal) => sessions.watchSessions({ parent: "nodes/n1" }, { signal }));
    try {
      expect((await watch.next(() => true, "the snapshot")).sessions.map((s) => s.tmuxSession)).toEqual(["before"]);
      const viewer = await TestViewer.attach(terminal, { name: "nodes/n1/sessions/before", cols: 80, rows: 24 });

      // A crash (SIGKILL, leaving its socket behind) the first time, a clean kill-server the second.
      const kills = [
        async () => process.kill(await serverPid(tmux), "SIGKILL"),
        async () => {
          await tmux.run("kill-server");
        },
      ];
      for (const [round, kill] of kills.entries()) {
        await kill();
        // The session the dead server held (a by-hand session's own REMOVED from the round before may
        // still be on its way, and is not this one).
        const lost = `nodes/n1/sessions/${round === 0 ? "before" : `after-${round - 1}`}`;
        await watch.next(
          (e) => e.type === WatchEventType.REMOVED && e.removedNames.includes(lost),
          "REMOVED for the sessions of the dead server",
        );
        expect((await sessions.listSessions({ parent: "nodes/n1" })).sessions).toEqual([]);
        expect((await failureOf(sessions.getSession({ name: "nodes/n1/sessions/before" }))).code).toBe("NotFound");

        const name = `after-${round}`;
        const created = await sessions.createSession({
          parent: "nodes/n1",
          sessionId: name,
          cwd: dir,
          command: ["sleep", "600"],
        });
        expect(created.session?.tmuxSession).toBe(name);
        await tmux.run("new-session", "-d", "-s", `by-hand-${round}`, "sleep 600");
        await watch.next(
          (e) => e.type === WatchEventType.UPSERTED && e.sessions.some((s) => s.tmuxSession === `by-hand-${round}`),
          "UPSERTED for a session started by hand on the new server",
        );
        const listed = (await sessions.listSessions({ parent: "nodes/n1" })).sessions.map((s) => s.tmuxSession);
        expect(listed).toEqual([name, `by-hand-${round}`]);
        const again = await TestViewer.attach(terminal, { name: `nodes/n1/sessions/${name}`, cols: 80, rows: 24 });
        again.close();
        await tmux.run("kill-session", "-t", `=by-hand-${round}`);
      }
      // The terminal of the first server ended with it.
      await waitFor(() => viewer.ended, "the first viewer's stream to end");
      viewer.close();
    } finally {
      await watch.close();
    }
    // Back to one session (after-1) and no viewer: the same descriptors, no pty, no tmux client left.
    await waitFor(async () => {
      const now = await footprint(pid);
      return now.ptys === 0 &&
        now.children === 0 &&
        now.shells <= 2 &&
        now.fds <= idle.fds + 3 * (now.shells - idle.shells)
        ? now
        : undefined;
    }, "the Node's descriptors and children to return to where they were");
    expect(node.stderr()).not.toMatch(/ERROR/);
  });
});
