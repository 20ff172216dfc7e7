import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Connectivity, type Node, type WatchNodesResponse } from "../../gen/staragent/v1/node_service_pb.js";
import { WatchEventType } from "../../gen/staragent/v1/session_service_pb.js";
import { type ServerProcess, startServerProcess } from "../support/servers.js";
import { createTestTmux, type TestTmux } from "../support/tmux.js";
import { waitFor } from "../support/wait.js";
import { failureOf, type HubFixture, startHubFixture, testToken } from "./hub-fixture.js";
import { readWatch } from "./watch-events.js";

/**
 * Live connectivity with a Hub and two Nodes as separate processes, each on its own tmux server and
 * home. The 2 / 5 / 10 s are deadlines of waits (polled), the goals of issue #12.
 */
const ONLINE_AFTER_START_MS = 2_000;
const OFFLINE_AFTER_KILL_MS = 5_000;
const OFFLINE_AFTER_PAUSE_MS = 10_000;
/** A restarted or resumed Node is checked again with backoff (at most 5 s apart). */
const ONLINE_AFTER_RETURN_MS = 10_000;

interface TestNode {
  readonly name: string;
  readonly tmux: TestTmux;
  readonly home: string;
  port: number;
  server: ServerProcess;
}

const nodeToken = testToken();
const nodes: TestNode[] = [];
let f: HubFixture | undefined;
const hub = () => f as HubFixture;

async function startNode(node: Omit<TestNode, "server" | "port"> & { port?: number }): Promise<ServerProcess> {
  return startServerProcess({
    kind: "node",
    tmuxSocket: node.tmux.socketName,
    token: nodeToken,
    home: node.home,
    args: ["--name", node.name, ...(node.port === undefined ? [] : ["--port", String(node.port)])],
  });
}

async function nodeState(name: string): Promise<Node> {
  const res = await hub().nodes.getNode({ name: `nodes/${name}` });
  return res.node as Node;
}

function connectivityOf(name: string) {
  return async () => Connectivity[(await nodeState(name)).connectivity];
}

beforeAll(async () => {
  for (const name of ["n1", "n2"]) {
    const tmux = createTestTmux();
    const home = await mkdtemp(join(tmpdir(), `sa-${name}-`));
    await tmux.run("new-session", "-d", "-s", `${name}-work`, "sleep 600");
    const partial = { name, tmux, home };
    const server = await startNode(partial);
    nodes.push({ ...partial, server, port: Number(new URL(server.url).port) });
  }
  f = await startHubFixture({
    args: nodes.flatMap((n) => ["--node", `${n.name}=${n.server.url}`]),
    env: { STARAGENT_NODE_TOKEN: nodeToken },
  });
});

afterAll(async () => {
  for (const n of nodes) n.server.process.kill("SIGCONT");
  await f?.close();
  for (const n of nodes) {
    await n.server.stop();
    await n.tmux.close();
    await rm(n.home, { recursive: true, force: true });
  }
});

describe("a Hub's view of its Nodes", () => {
  it("shows both Nodes ONLINE within 2 s of starting, with nobody listing, and what they run", async () => {
    await waitFor(
      async () => (await hub().nodes.listNodes({})).nodes.every((n) => n.connectivity === Connectivity.ONLINE),
      "both Nodes ONLINE",
      ONLINE_AFTER_START_MS,
      20,
    );
    const listed = (await hub().nodes.listNodes({})).nodes;
    expect(listed.map((n) => [n.name, Connectivity[n.connectivity], n.lastError])).toEqual([
      ["nodes/local", "ONLINE", ""],
      ["nodes/n1", "ONLINE", ""],
      ["nodes/n2", "ONLINE", ""],
    ]);
    for (const n of listed) {
      expect(n.version).not.toBe("");
      expect(n.hostname).not.toBe("");
      expect(n.lastSeenTime).toBeDefined();
    }
  });

  it("keeps last_seen_time current without any call touching the Node", async () => {
    const before = Number((await nodeState("n1")).lastSeenTime?.seconds);
    await waitFor(
      async () => Number((await nodeState("n1")).lastSeenTime?.seconds) > before,
      "last_seen_time to move on",
    );
  });

  it("does not mark a Node OFFLINE for callers' short deadlines", async () => {
    for (let i = 0; i < 20; i++) {
      const calls = [
        hub().sessions.getSession({ name: "nodes/n1/sessions/n1-work" }, { timeoutMs: 1 }),
        hub().sessions.listSessions({ parent: "nodes/n1" }, { timeoutMs: 1 }),
        hub().sessions.listSessions({ parent: "nodes/-" }, { timeoutMs: 1 }),
      ];
      for (const call of calls) await call.catch(() => undefined);
    }
    expect(await nodeState("n1")).toMatchObject({ connectivity: Connectivity.ONLINE, lastError: "" });
    expect((await hub().sessions.listSessions({ parent: "nodes/-" })).unreachable).toEqual([]);
  });

  it("passes the caller's deadline on: a create that times out either created nothing or is visible", async () => {
    const cwd = await mkdtemp(join(tmpdir(), "sa-cwd-"));
    try {
      const first = await failureOf(
        hub().sessions.createSession(
          { parent: "nodes/n1", sessionId: "hasty", cwd, command: ["sleep", "600"] },
          { timeoutMs: 1 },
        ),
      );
      expect(first.code).toBe("DeadlineExceeded");
      // The contract (docs/api.md): a retry either creates the session or says it already exists.
      const retry = await hub()
        .sessions.createSession({ parent: "nodes/n1", sessionId: "hasty", cwd, command: ["sleep", "600"] })
        .then(
          () => "Created",
          (e) => (e as Error).message,
        );
      expect(retry).toMatch(/^Created$|^\[already_exists\]/);
      const listed = await hub().sessions.listSessions({ parent: "nodes/n1" });
      expect(listed.sessions.map((s) => s.tmuxSession)).toContain("hasty");
    } finally {
      await nodes[0]?.tmux.run("kill-session", "-t", "=hasty").catch(() => undefined);
      await rm(cwd, { recursive: true, force: true });
    }
  });

  it("marks a killed Node OFFLINE within 5 s, its sessions unreachable, and takes it back when it restarts", async () => {
    const n1 = nodes[0] as TestNode;
    const watch = readWatch((signal) => hub().sessions.watchSessions({ parent: "nodes/-" }, { signal }));
    const nodeEvents: WatchNodesResponse[] = [];
    const nodeWatch = new AbortController();
    const watchingNodes = (async () => {
      for await (const e of hub().nodes.watchNodes({}, { signal: nodeWatch.signal })) nodeEvents.push(e);
    })().catch(() => undefined);
    try {
      const snapshot = await watch.next((e) => e.type === WatchEventType.SNAPSHOT, "the snapshot");
      expect(snapshot.sessions.map((s) => s.name)).toContain("nodes/n1/sessions/n1-work");
      n1.server.process.kill("SIGKILL");
      await waitFor(async () => (await connectivityOf("n1")()) === "OFFLINE", "n1 OFFLINE", OFFLINE_AFTER_KILL_MS, 20);
      expect((await nodeState("n1")).lastError).toMatch(/^cannot reach http:\/\/127\.0\.0\.1:\d+ /);
      const lost = await watch.next((e) => e.type === WatchEventType.UNREACHABLE_CHANGED, "n1 reported unreachable");
      expect(lost.unreachable).toEqual(["nodes/n1"]);
      expect(lost.sessions.map((s) => [s.name, s.nodeUnreachable])).toEqual([["nodes/n1/sessions/n1-work", true]]);
      const listed = await hub().sessions.listSessions({ parent: "nodes/-" });
      expect(listed.unreachable).toEqual(["nodes/n1"]);
      expect(listed.sessions.find((s) => s.tmuxSession === "n1-work")?.nodeUnreachable).toBe(true);
      expect(await failureOf(hub().sessions.getSession({ name: "nodes/n1/sessions/n1-work" }))).toMatchObject({
        code: "Unavailable",
        message: expect.stringMatching(/^node n1 is unreachable: cannot reach/),
      });
      await waitFor(
        () =>
          nodeEvents.some((e) => e.nodes.some((n) => n.name === "nodes/n1" && n.connectivity === Connectivity.OFFLINE)),
        "WatchNodes to tell",
      );

      n1.server = await startNode(n1);
      await waitFor(async () => (await connectivityOf("n1")()) === "ONLINE", "n1 ONLINE again", ONLINE_AFTER_RETURN_MS);
      const back = await watch.next(
        (e) => e.type === WatchEventType.UNREACHABLE_CHANGED && e.unreachable.length === 0,
        "n1 reachable again",
      );
      expect(back.sessions.map((s) => [s.name, s.nodeUnreachable])).toEqual([["nodes/n1/sessions/n1-work", false]]);
      const relisted = await hub().sessions.listSessions({ parent: "nodes/-" });
      expect([relisted.unreachable, relisted.sessions.map((s) => s.name)]).toEqual([
        [],
        ["nodes/n1/sessions/n1-work", "nodes/n2/sessions/n2-work"],
      ]);
      await waitFor(
        () =>
          nodeEvents.some((e) =>
            e.nodes.some((n) => n.name === "nodes/n1" && n.connectivity === Connectivity.ONLINE),
          ) && nodeEvents.at(-1)?.nodes.find((n) => n.name === "nodes/n1")?.connectivity === Connectivity.ONLINE,
        "WatchNodes to tell it is back",
      );
    } finally {
      nodeWatch.abort();
      await watchingNodes;
      await watch.close();
    }
  });

  it("marks a paused Node (its connection silent) OFFLINE within 10 s, reports it to watchers, and takes it back", async () => {
    const n2 = nodes[1] as TestNode;
    // Meanwhile, a Node that accepts connections but never answers goes from CONNECTING to OFFLINE.
    const silent = net.createServer((socket) => socket.on("error", () => undefined));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const watch = readWatch((signal) => hub().sessions.watchSessions({ parent: "nodes/-" }, { signal }));
    try {
      const { port } = silent.address() as net.AddressInfo;
      await hub().nodes.addNode({ nodeId: "mute", url: `http://127.0.0.1:${port}`, token: "t0ken-mute", force: true });
      expect(await connectivityOf("mute")()).toBe("CONNECTING");
      await watch.next((e) => e.type === WatchEventType.SNAPSHOT, "the snapshot");
      n2.server.process.kill("SIGSTOP");
      await waitFor(async () => (await connectivityOf("n2")()) === "OFFLINE", "n2 OFFLINE", OFFLINE_AFTER_PAUSE_MS, 20);
      expect(await connectivityOf("mute")()).toBe("OFFLINE");
      // The watch takes in mute, added while it ran, and reports it unreachable as well.
      const lost = await watch.next(
        (e) => e.type === WatchEventType.UNREACHABLE_CHANGED && e.unreachable.includes("nodes/n2"),
        "n2 reported unreachable",
      );
      expect(lost.unreachable).toEqual(["nodes/mute", "nodes/n2"]);
      // Calls fail at once rather than hang on the silent connection.
      expect((await failureOf(hub().sessions.getSession({ name: "nodes/n2/sessions/n2-work" }))).code).toBe(
        "Unavailable",
      );
      n2.server.process.kill("SIGCONT");
      await waitFor(async () => (await connectivityOf("n2")()) === "ONLINE", "n2 ONLINE again", ONLINE_AFTER_RETURN_MS);
      await watch.next(
        (e) => e.type === WatchEventType.UNREACHABLE_CHANGED && e.unreachable.join() === "nodes/mute",
        "n2 reachable again",
      );
      const listed = await hub().sessions.listSessions({ parent: "nodes/n2" });
      expect([listed.unreachable, listed.sessions.map((s) => s.name)]).toEqual([[], ["nodes/n2/sessions/n2-work"]]);
    } finally {
      n2.server.process.kill("SIGCONT");
      await watch.close();
      await hub()
        .nodes.removeNode({ name: "nodes/mute" })
        .catch(() => undefined);
      silent.close();
    }
  });
});
