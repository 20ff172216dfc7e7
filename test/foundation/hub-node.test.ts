import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Connectivity } from "../../gen/staragent/v1/node_service_pb.js";
import { SessionOrigin } from "../../gen/staragent/v1/session_pb.js";
import { WatchEventType } from "../../gen/staragent/v1/session_service_pb.js";
import { NODE_CALL_TIMEOUT_MS } from "../../services/hub/node-registry.js";
import { closedPort } from "../support/ports.js";
import { runCli, type ServerProcess, startServerProcess } from "../support/servers.js";
import { createTestTmux, type TestTmux } from "../support/tmux.js";
import { waitFor } from "../support/wait.js";
import { failureOf, type HubFixture, startHubFixture, testToken } from "./hub-fixture.js";
import { readWatch } from "./watch-events.js";

/** What a list may take beyond the call timeout on a busy machine (the local listing, scheduling). */
const TIMEOUT_SLACK_MS = 2_000;

describe("a Hub routing to a Node on another tmux server", () => {
  let nodeTmux: TestTmux;
  let node: ServerProcess | undefined;
  let f: HubFixture | undefined;
  let cwd: string;
  const hub = () => f as HubFixture;

  beforeAll(async () => {
    nodeTmux = createTestTmux();
    cwd = await mkdtemp(join(tmpdir(), "sa-node-cwd-"));
    await nodeTmux.run("new-session", "-d", "-s", "remote-one", "sleep 600");
    const nodeToken = testToken();
    node = await startServerProcess({
      kind: "node",
      tmuxSocket: nodeTmux.socketName,
      token: nodeToken,
      args: ["--name", "a1"],
    });
    f = await startHubFixture({ args: ["--node", `a1=${node.url}`], env: { STARAGENT_NODE_TOKEN: nodeToken } });
    await f.tmux.run("new-session", "-d", "-s", "local-one", "sleep 600");
  });
  afterAll(async () => {
    await f?.close();
    await node?.stop();
    await nodeTmux?.close();
    await rm(cwd, { recursive: true, force: true });
  });

  it("lists the Node's sessions next to its own", async () => {
    const res = await hub().sessions.listSessions({ parent: "nodes/-" });
    expect(res.sessions.map((s) => s.name)).toEqual(["nodes/a1/sessions/remote-one", "nodes/local/sessions/local-one"]);
    expect(res.unreachable).toEqual([]);
    expect(res.sessions.every((s) => !s.nodeUnreachable)).toBe(true);
    const onlyNode = await hub().sessions.listSessions({ parent: "nodes/a1" });
    expect(onlyNode.sessions.map((s) => s.tmuxSession)).toEqual(["remote-one"]);
    const nodes = await hub().nodes.listNodes({});
    expect(nodes.nodes.map((n) => [n.name, n.connectivity])).toEqual([
      ["nodes/local", Connectivity.ONLINE],
      ["nodes/a1", Connectivity.ONLINE],
    ]);
    const ls = await runCli(["ls"], hub().cliEnv);
    expect(ls.code).toBe(0);
    expect(ls.stdout).toMatch(/^a1\/remote-one\s/m);
  });

  it("pages through sessions and nodes of every node without skipping any", async () => {
    await f?.tmux.run("new-session", "-d", "-s", "local-two", "sleep 600");
    await nodeTmux.run("new-session", "-d", "-s", "remote-two", "sleep 600");
    try {
      const names: string[] = [];
      let pageToken = "";
      do {
        const res = await hub().sessions.listSessions({ parent: "nodes/-", pageSize: 1, pageToken });
        names.push(...res.sessions.map((s) => s.name));
        pageToken = res.nextPageToken;
      } while (pageToken !== "");
      expect(names).toEqual([
        "nodes/a1/sessions/remote-one",
        "nodes/a1/sessions/remote-two",
        "nodes/local/sessions/local-one",
        "nodes/local/sessions/local-two",
      ]);
      const first = await hub().nodes.listNodes({ pageSize: 1 });
      const second = await hub().nodes.listNodes({ pageSize: 1, pageToken: first.nextPageToken });
      expect([...first.nodes, ...second.nodes].map((n) => n.name)).toEqual(["nodes/local", "nodes/a1"]);
      expect(second.nextPageToken).toBe("");
    } finally {
      await f?.tmux.run("kill-session", "-t", "=local-two");
      await nodeTmux.run("kill-session", "-t", "=remote-two");
    }
  });

  it("creates and stops sessions on the Node, on the Node's tmux", async () => {
    const created = await hub().sessions.createSession({
      parent: "nodes/a1",
      sessionId: "made-remote",
      cwd,
      command: ["sleep", "600"],
    });
    expect(created.session).toMatchObject({
      name: "nodes/a1/sessions/made-remote",
      node: "a1",
      origin: SessionOrigin.CREATED,
    });
    expect(await nodeTmux.run("list-sessions", "-F", "#{session_name}")).toContain("made-remote");
    await expect(hub().tmux.run("has-session", "-t", "=made-remote")).rejects.toThrow();
    const stopped = await runCli(["stop", "a1/made-remote"], hub().cliEnv);
    expect(stopped).toMatchObject({ code: 0, stdout: "stopped nodes/a1/sessions/made-remote\n" });
    expect(await nodeTmux.run("list-sessions", "-F", "#{session_name}")).not.toContain("made-remote");
  });

  it("passes the Node's errors to the client unchanged", async () => {
    expect(await failureOf(hub().sessions.getSession({ name: "nodes/a1/sessions/ghost" }))).toEqual({
      code: "NotFound",
      message: "session nodes/a1/sessions/ghost not found",
    });
    expect(
      await failureOf(
        hub().sessions.createSession({ parent: "nodes/a1", sessionId: "x", cwd: "relative", command: ["sleep", "1"] }),
      ),
    ).toEqual({
      code: "InvalidArgument",
      message: 'cwd: "relative" is not an absolute path (give /path/to/folder, ~ or ~/folder)',
    });
    expect(await failureOf(hub().sessions.stopSession({ name: "nodes/a1/sessions/remote-one" }))).toMatchObject({
      code: "FailedPrecondition",
      message: expect.stringMatching(/^remote-one was not created by StarAgent/),
    });
    expect(
      await failureOf(
        hub().sessions.createSession({ parent: "nodes/a1", sessionId: "remote-one", cwd, command: ["sleep", "1"] }),
      ),
    ).toMatchObject({ code: "AlreadyExists" });
  });

  it("adds, shows and removes Nodes through NodeService, refusing bad input", async () => {
    const port = await closedPort();
    const valid = { nodeId: "w2", url: `http://127.0.0.1:${port}`, token: "t0ken-for-w2", displayName: "" };
    const invalid: Array<[Partial<typeof valid>, string]> = [
      [{ nodeId: "Bad" }, "node_id"],
      [{ nodeId: "" }, "node_id"],
      [{ nodeId: "local" }, "node_id"],
      [{ url: "not a url" }, "url"],
      [{ url: "ftp://127.0.0.1:1" }, "url"],
      [{ url: "http://user:pw@127.0.0.1:1" }, "url"],
      [{ token: "" }, "token"],
      [{ displayName: "x".repeat(129) }, "display_name"],
    ];
    for (const [change, field] of invalid) {
      const failure = await failureOf(hub().nodes.addNode({ ...valid, ...change }));
      expect([failure.code, failure.message.split(":")[0]]).toEqual(["InvalidArgument", field]);
    }
    expect((await failureOf(hub().nodes.addNode({ ...valid, nodeId: "a1" }))).code).toBe("AlreadyExists");

    const added = await hub().nodes.addNode({ ...valid, force: true });
    expect(added.node).toMatchObject({ name: "nodes/w2", url: valid.url, displayName: "w2" });
    const stored = join(hub().hub.home, "nodes.json");
    expect((await stat(stored)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(stored, "utf8"))).toEqual([
      { id: "w2", url: valid.url, token: valid.token, displayName: "w2" },
    ]);
    expect((await hub().nodes.getNode({ name: "nodes/w2" })).node?.url).toBe(valid.url);
    expect((await hub().nodes.listNodes({})).nodes.map((n) => n.name)).toEqual(["nodes/local", "nodes/a1", "nodes/w2"]);

    // A Node that does not answer: its calls are UNAVAILABLE, lists name it unreachable.
    expect((await failureOf(hub().sessions.getSession({ name: "nodes/w2/sessions/a" }))).code).toBe("Unavailable");
    expect((await hub().sessions.listSessions({ parent: "nodes/-" })).unreachable).toEqual(["nodes/w2"]);

    await hub().nodes.removeNode({ name: "nodes/w2" });
    expect((await hub().nodes.listNodes({})).nodes.map((n) => n.name)).toEqual(["nodes/local", "nodes/a1"]);
    expect(JSON.parse(await readFile(stored, "utf8"))).toEqual([]);
    expect((await failureOf(hub().nodes.removeNode({ name: "nodes/w2" }))).code).toBe("NotFound");
    expect((await failureOf(hub().nodes.removeNode({ name: "nodes/local" }))).code).toBe("FailedPrecondition");
    expect((await failureOf(hub().nodes.getNode({ name: "a1" }))).code).toBe("InvalidArgument");
  });

  it("lists a Node that accepts connections but never answers as unreachable, within the call timeout", async () => {
    const silent = net.createServer((socket) => socket.on("error", () => undefined));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = silent.address() as net.AddressInfo;
      await hub().nodes.addNode({
        nodeId: "wedged",
        url: `http://127.0.0.1:${port}`,
        token: "t0ken-wedged",
        force: true,
      });
      const started = Date.now();
      const res = await hub().sessions.listSessions({ parent: "nodes/-" });
      expect(Date.now() - started).toBeLessThan(NODE_CALL_TIMEOUT_MS + TIMEOUT_SLACK_MS);
      expect(res.unreachable).toEqual(["nodes/wedged"]);
      expect(res.sessions.map((s) => s.name)).toEqual([
        "nodes/a1/sessions/remote-one",
        "nodes/local/sessions/local-one",
      ]);
    } finally {
      await hub().nodes.removeNode({ name: "nodes/wedged" });
      silent.close();
    }
  });

  it("merges the Node's changes into one watch stream", async () => {
    const watch = readWatch((signal) => hub().sessions.watchSessions({ parent: "nodes/-" }, { signal }));
    try {
      const snapshot = await watch.next(() => true, "the first event");
      expect(snapshot.type).toBe(WatchEventType.SNAPSHOT);
      expect(snapshot.sessions.map((s) => s.name)).toEqual([
        "nodes/a1/sessions/remote-one",
        "nodes/local/sessions/local-one",
      ]);
      expect(snapshot.unreachable).toEqual([]);
      await nodeTmux.run("new-session", "-d", "-s", "remote-new", "sleep 600");
      await watch.next(
        (e) => e.type === WatchEventType.UPSERTED && e.sessions.some((s) => s.name === "nodes/a1/sessions/remote-new"),
        "UPSERTED from the Node",
      );
      await nodeTmux.run("kill-session", "-t", "=remote-new");
      const removed = await watch.next((e) => e.type === WatchEventType.REMOVED, "REMOVED from the Node");
      expect(removed.removedNames).toEqual(["nodes/a1/sessions/remote-new"]);
    } finally {
      await watch.close();
    }
  });

  it("keeps a stopped Node's last known sessions, marked unreachable; its calls are UNAVAILABLE", async () => {
    const watch = readWatch((signal) => hub().sessions.watchSessions({ parent: "nodes/-" }, { signal }));
    try {
      expect((await watch.next(() => true, "the first event")).type).toBe(WatchEventType.SNAPSHOT);
      await (node as ServerProcess).stop();
      const changed = await watch.next((e) => e.type === WatchEventType.UNREACHABLE_CHANGED, "UNREACHABLE_CHANGED");
      expect(changed.unreachable).toEqual(["nodes/a1"]);
      expect(changed.sessions.map((s) => [s.name, s.nodeUnreachable])).toEqual([
        ["nodes/a1/sessions/remote-one", true],
      ]);
    } finally {
      await watch.close();
    }
    const res = await hub().sessions.listSessions({ parent: "nodes/-" });
    expect(res.unreachable).toEqual(["nodes/a1"]);
    expect(res.sessions.map((s) => [s.name, s.nodeUnreachable])).toEqual([
      ["nodes/a1/sessions/remote-one", true],
      ["nodes/local/sessions/local-one", false],
    ]);
    // The last known sessions obey the filter too.
    const system = await hub().sessions.listSessions({ parent: "nodes/-", filter: "type=system" });
    expect([system.sessions, system.unreachable]).toEqual([[], ["nodes/a1"]]);
    const failure = await failureOf(hub().sessions.getSession({ name: "nodes/a1/sessions/remote-one" }));
    expect(failure).toMatchObject({ code: "Unavailable", message: expect.stringMatching(/^node a1 is unreachable/) });
    // The health check decides connectivity (a failed call only makes it look again): OFFLINE within 5 s.
    await waitFor(
      async () => (await hub().nodes.getNode({ name: "nodes/a1" })).node?.connectivity === Connectivity.OFFLINE,
      "a1 to show OFFLINE",
      5_000,
    );
    const ls = await runCli(["ls"], hub().cliEnv);
    expect(ls.code).toBe(0);
    expect(ls.stderr).toBe("warning: nodes/a1 is unreachable; its sessions are as last seen\n");
    expect(ls.stdout).toMatch(/^a1\/remote-one\s+\S+\?\s/m);
  });
});
