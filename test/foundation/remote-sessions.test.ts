import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import * as pty from "node-pty";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Connectivity } from "../../gen/staragent/v1/node_service_pb.js";
import {
  ChatRole,
  type Session,
  SessionOrigin,
  SessionStatus,
  StatusReason,
} from "../../gen/staragent/v1/session_pb.js";
import { WatchEventType } from "../../gen/staragent/v1/session_service_pb.js";
import { TerminalStream } from "../../gen/staragent/v1/terminal_stream_pb.js";
import { bearerInterceptor } from "../../services/common/bearer.js";
import {
  REPO_ROOT,
  runCli,
  runCliWithInput,
  type ServerProcess,
  STARAGENT_BIN,
  startServerProcess,
} from "../support/servers.js";
import { TestViewer } from "../support/test-viewer.js";
import { createTestTmux, type TestTmux } from "../support/tmux.js";
import { waitFor } from "../support/wait.js";
import { failureOf, type HubFixture, startHubFixture, testToken } from "./hub-fixture.js";
import { readWatch } from "./watch-events.js";

const STAND_INS = join(REPO_ROOT, "test/stand-ins");

/** A Node process on its own tmux server and home, with the stand-in CLIs on its PATH. */
interface RemoteNode {
  readonly name: string;
  readonly tmux: TestTmux;
  readonly project: string;
  readonly server: ServerProcess;
}

describe("remote sessions through a Hub, with two Nodes as processes", () => {
  const nodeToken = testToken();
  const nodes: RemoteNode[] = [];
  let dir: string;
  let f: HubFixture | undefined;
  const hub = () => f as HubFixture;
  const node = (name: string) => nodes.find((n) => n.name === name) as RemoteNode;

  beforeAll(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), "sa-remote-")));
    for (const name of ["n1", "n2"]) {
      const user = join(dir, `${name}-user`);
      const project = join(dir, `${name}-project`);
      await Promise.all([mkdir(user), mkdir(project)]);
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        HOME: user,
        PATH: `${STAND_INS}:${process.env.PATH}`,
        STANDIN_THINK_MS: "50",
        STANDIN_TURN_MS: "200",
        CLAUDE_CONFIG_DIR: "",
        CODEX_HOME: "",
        XDG_DATA_HOME: "",
      };
      const tmux = createTestTmux(env);
      const server = await startServerProcess({
        kind: "node",
        tmuxSocket: tmux.socketName,
        token: nodeToken,
        args: ["--name", name],
        env,
      });
      nodes.push({ name, tmux, project, server });
    }
    f = await startHubFixture();
    // The Nodes are added as a person would: n1 with the token in a file, n2 with it on stdin.
    const tokenFile = join(dir, "n1-token");
    await writeFile(tokenFile, `${nodeToken}\n`, { mode: 0o600 });
    const first = await runCli(["nodes", "add", "n1", node("n1").server.url, "--token-file", tokenFile], f.cliEnv);
    const second = await runCliWithInput(["nodes", "add", "n2", node("n2").server.url], f.cliEnv, `${nodeToken}\n`);
    for (const added of [first, second]) {
      if (added.code !== 0) throw new Error(`staragent nodes add failed: ${added.stderr}`);
    }
    await waitFor(
      async () => (await hub().nodes.listNodes({})).nodes.every((n) => n.connectivity === Connectivity.ONLINE),
      "both Nodes ONLINE",
    );
  });

  afterAll(async () => {
    await f?.close();
    for (const n of nodes) {
      await n.server.stop();
      await n.tmux.close();
    }
    await rm(dir, { recursive: true, force: true });
  });

  it("lists the Nodes with 'staragent nodes ls', as a table and as JSON, never showing a token", async () => {
    const ls = await runCli(["nodes", "ls"], hub().cliEnv);
    expect(ls).toMatchObject({ code: 0, stderr: "" });
    const lines = ls.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^NODE\s+CONNECTIVITY\s+LAST SEEN\s+VERSION\s+HOST\s+URL\s+LAST ERROR$/);
    expect(lines[1]).toMatch(/^local\s+online\s+0s ago\s+\d+\.\d+\.\d+\s+\S+\s+\(the Hub's machine\)$/);
    for (const [i, name] of [
      [2, "n1"],
      [3, "n2"],
    ] as const) {
      const url = node(name).server.url.replace(/\./g, "\\.");
      expect(lines[i]).toMatch(new RegExp(`^${name}\\s+online\\s+\\d+s ago\\s+\\d+\\.\\d+\\.\\d+\\s+\\S+\\s+${url}$`));
    }
    const json = await runCli(["nodes", "ls", "--json"], hub().cliEnv);
    const parsed = JSON.parse(json.stdout) as { nodes: Array<{ name: string; connectivity: string; url?: string }> };
    expect(parsed.nodes.map((n) => [n.name, n.connectivity])).toEqual([
      ["nodes/local", "CONNECTIVITY_ONLINE"],
      ["nodes/n1", "CONNECTIVITY_ONLINE"],
      ["nodes/n2", "CONNECTIVITY_ONLINE"],
    ]);
    for (const out of [ls.stdout, json.stdout, hub().hub.stdout(), hub().hub.stderr()])
      expect(out).not.toContain(nodeToken);
  });

  it("refuses 'staragent nodes add' without a token or with a bad URL, saying why", async () => {
    expect(await runCliWithInput(["nodes", "add", "n3", "http://127.0.0.1:1"], hub().cliEnv, "\n")).toEqual({
      code: 2,
      stdout: "",
      stderr: "staragent nodes: the node token is empty\n",
    });
    const badUrl = await runCliWithInput(["nodes", "add", "n3", "ftp://x"], hub().cliEnv, nodeToken);
    expect(badUrl.code).toBe(1);
    expect(badUrl.stderr).toBe(
      "staragent nodes: InvalidArgument: url: must be http:// or https:// with a host and port, without credentials\n",
    );
    const taken = await runCliWithInput(["nodes", "add", "n1", node("n1").server.url], hub().cliEnv, nodeToken);
    expect(taken.stderr).toBe("staragent nodes: AlreadyExists: node_id: node n1 already exists\n");
    const usage = await runCli(["nodes", "add", "n3"], hub().cliEnv);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/^staragent nodes: usage: staragent nodes ls/);
  });

  it("asks for the token at a terminal without echoing it, and warns when the Node is not usable", async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, ...hub().cliEnv, TERM: "xterm-256color" };
    const term = pty.spawn(
      process.execPath,
      [STARAGENT_BIN, "nodes", "add", "n1-again", node("n1").server.url, "--force"],
      {
        cols: 120,
        rows: 20,
        env,
      },
    );
    let screen = "";
    term.onData((d) => {
      screen += d;
    });
    const exit = new Promise<number>((resolve) => term.onExit(({ exitCode }) => resolve(exitCode)));
    try {
      await waitFor(() => screen.includes("Node token for n1-again"), "the prompt");
      term.write(`${nodeToken}\r`);
      expect(await exit).toBe(0);
      // That Node serves another name: it is added all the same, and the warning says what to do.
      expect(screen).toMatch(/added nodes\/n1-again at http:\/\/127\.0\.0\.1:\d+: offline\r?\n/);
      expect(screen).toMatch(
        /warning: nodes\/n1-again: the Node at \S+ is not n1-again .* start it with --name n1-again/,
      );
      expect(screen).not.toContain(nodeToken);
    } finally {
      term.kill();
      await hub()
        .nodes.removeNode({ name: "nodes/n1-again" })
        .catch(() => undefined);
    }
  });

  it("runs a remote Claude Code session through the Hub: create, attach and type, status, seen, chat, stop", async () => {
    const n1 = node("n1");
    const name = "nodes/n1/sessions/agent";
    const terminal = createClient(
      TerminalStream,
      createGrpcTransport({ baseUrl: hub().hub.url, interceptors: [bearerInterceptor(hub().hub.token)] }),
    );
    const watch = readWatch((signal) => hub().sessions.watchSessions({ parent: "nodes/-" }, { signal }));
    let viewer: TestViewer | undefined;
    try {
      await watch.next((e) => e.type === WatchEventType.SNAPSHOT, "the snapshot");
      const created = await hub().sessions.createSession({
        parent: "nodes/n1",
        sessionId: "agent",
        cwd: n1.project,
        command: ["claude"],
      });
      expect(created.session).toMatchObject({ name, node: "n1", origin: SessionOrigin.CREATED, cwd: n1.project });
      expect(await n1.tmux.run("list-sessions", "-F", "#{session_name}")).toBe("agent\n");
      const fresh = await waitFor(async () => {
        const s = (await hub().sessions.getSession({ name })).session;
        return s?.statusReason === StatusReason.NO_TURN && s;
      }, "the fresh session");
      expect(fresh.status).toBe(SessionStatus.IDLE);

      // Its live terminal through the Hub: the screen, then typing a prompt.
      viewer = await TestViewer.attach(terminal, { name, cols: 100, rows: 30 });
      await viewer.waitForOutput("for shortcuts");
      await viewer.type("hello remote");
      await viewer.type("\r");
      const bySession = (match: (s: Session) => boolean) => (e: { type: WatchEventType; sessions: Session[] }) =>
        e.type === WatchEventType.UPSERTED && e.sessions.some((s) => s.name === name && match(s));
      await watch.next(
        bySession((s) => s.status === SessionStatus.WORKING),
        "WORKING from the Node",
      );
      const review = await watch.next(
        bySession((s) => s.statusReason === StatusReason.UNSEEN_COMPLETION),
        "REVIEW from the Node",
      );
      const done = review.sessions.find((s) => s.name === name) as Session;
      expect(done.completionId).not.toBe("");
      await viewer.waitForOutput("Done: hello remote");

      const seen = await hub().sessions.markSessionSeen({ name, completionId: done.completionId });
      expect(seen.session).toMatchObject({ status: SessionStatus.IDLE, statusReason: StatusReason.SEEN_COMPLETION });

      const sent = await hub().sessions.sendChatMessage({ name, text: "and a chat message" });
      expect(sent).toMatchObject({ confirmed: true, confirmationDetail: "claude native log shows the new user turn" });
      const chat = await waitFor(async () => {
        const c = await hub().sessions.getChat({ name });
        return c.messages.some((m) => m.text.includes("Done: and a chat message")) && c;
      }, "the chat's second reply");
      expect(chat.messages.map((m) => [ChatRole[m.role], m.text])).toEqual(
        expect.arrayContaining([
          ["USER", "hello remote"],
          ["ASSISTANT", "Done: hello remote"],
          ["USER", "and a chat message"],
          ["ASSISTANT", "Done: and a chat message"],
        ]),
      );

      viewer.close();
      viewer = undefined;
      await hub().sessions.stopSession({ name });
      expect(await failureOf(hub().sessions.getSession({ name }))).toEqual({
        code: "NotFound",
        message: `session ${name} not found`,
      });
      await watch.next(
        (e) => e.type === WatchEventType.REMOVED && e.removedNames.includes(name),
        "REMOVED from the Node",
      );
      expect(await n1.tmux.client.query(["list-sessions", "-F", "#{session_name}"])).toBe("");
    } finally {
      viewer?.close();
      await watch.close();
    }
  });

  it("runs a remote Codex session on the other Node: chat sent and read, status, stop", async () => {
    const n2 = node("n2");
    const name = "nodes/n2/sessions/coder";
    await hub().sessions.createSession({ parent: "nodes/n2", sessionId: "coder", cwd: n2.project, command: ["codex"] });
    await waitFor(
      async () => (await hub().sessions.getSession({ name })).session?.statusReason === StatusReason.NO_TURN,
      "the fresh codex session",
    );
    const sent = await hub().sessions.sendChatMessage({ name, text: "hello codex" });
    expect(sent).toMatchObject({ confirmed: true, confirmationDetail: "codex native log shows the new user turn" });
    const done = await waitFor(async () => {
      const s = (await hub().sessions.getSession({ name })).session;
      return s?.statusReason === StatusReason.UNSEEN_COMPLETION && s;
    }, "the completed codex turn");
    expect(done.status).toBe(SessionStatus.REVIEW);
    const chat = await hub().sessions.getChat({ name });
    expect(chat.messages.some((m) => m.role === ChatRole.ASSISTANT && m.text.includes("Done: hello codex"))).toBe(true);
    const listed = await hub().sessions.listSessions({ parent: "nodes/-" });
    expect(listed.sessions.map((s) => s.name)).toEqual([name]);
    await hub().sessions.stopSession({ name });
    expect((await hub().sessions.listSessions({ parent: "nodes/n2" })).sessions).toEqual([]);
  });

  it("forgets a Node with 'staragent nodes rm'; its sessions keep running on it", async () => {
    await node("n2").tmux.run("new-session", "-d", "-s", "keeps", "sleep 600");
    expect(await runCli(["nodes", "rm", "n2"], hub().cliEnv)).toEqual({
      code: 0,
      stdout: "removed nodes/n2 (its sessions keep running on it)\n",
      stderr: "",
    });
    expect((await hub().nodes.listNodes({})).nodes.map((n) => n.name)).toEqual(["nodes/local", "nodes/n1"]);
    expect(await node("n2").tmux.run("list-sessions", "-F", "#{session_name}")).toBe("keeps\n");
    const again = await runCli(["nodes", "rm", "n2"], hub().cliEnv);
    expect(again).toMatchObject({ code: 1, stderr: "staragent nodes: NotFound: node nodes/n2 not found\n" });
  });
});
