import { mkdtemp, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Connectivity, NodeService } from "../../gen/staragent/v1/node_service_pb.js";
import { SessionService, WatchEventType } from "../../gen/staragent/v1/session_service_pb.js";
import { SERVER_ROLE_HEADER } from "../../services/common/hops.js";
import { refusalOf } from "../../services/common/refusals.js";
import { type ServerProcess, startServerProcess } from "../support/servers.js";
import { createTestTmux, type TestTmux } from "../support/tmux.js";
import { waitFor } from "../support/wait.js";
import { failureOf, grpcClient, type HubFixture, startHubFixture, testToken } from "./hub-fixture.js";
import { readWatch } from "./watch-events.js";

/** How long a misconfigured Node may take to show OFFLINE with its reason (its first health check). */
const PROBLEM_SHOWN_MS = 5_000;

/** A loopback port nothing listens on now (bound, then released). */
async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe("a Hub with a Node it cannot use", () => {
  const goodToken = testToken();
  const otherToken = testToken();
  let goodTmux: TestTmux;
  let otherTmux: TestTmux;
  let good: ServerProcess | undefined;
  let other: ServerProcess | undefined;
  let f: HubFixture | undefined;
  const hub = () => f as HubFixture;

  beforeAll(async () => {
    goodTmux = createTestTmux();
    otherTmux = createTestTmux();
    await goodTmux.run("new-session", "-d", "-s", "fine", "sleep 600");
    await otherTmux.run("new-session", "-d", "-s", "elsewhere", "sleep 600");
    good = await startServerProcess({
      kind: "node",
      tmuxSocket: goodTmux.socketName,
      token: goodToken,
      args: ["--name", "good"],
    });
    other = await startServerProcess({
      kind: "node",
      tmuxSocket: otherTmux.socketName,
      token: otherToken,
      args: ["--name", "n2"],
    });
    f = await startHubFixture({ args: ["--node", `good=${good.url}`], env: { STARAGENT_NODE_TOKEN: goodToken } });
  });

  afterAll(async () => {
    await f?.close();
    await good?.stop();
    await other?.stop();
    await goodTmux?.close();
    await otherTmux?.close();
  });

  it("lists everyone else's sessions when a Node refuses the Hub's token, and says which", async () => {
    const wrong = "not-the-node-token";
    await hub().nodes.addNode({ nodeId: "badtok", url: (other as ServerProcess).url, token: wrong, force: true });
    try {
      const listed = await hub().sessions.listSessions({ parent: "nodes/-" });
      expect([listed.unreachable, listed.sessions.map((s) => s.name)]).toEqual([
        ["nodes/badtok"],
        ["nodes/good/sessions/fine"],
      ]);
      expect((await hub().sessions.listSessions({ parent: "nodes/badtok" })).unreachable).toEqual(["nodes/badtok"]);
      expect((await hub().sessions.listAdoptableSessions({ parent: "nodes/-" })).unreachable).toEqual(["nodes/badtok"]);
      const watch = readWatch((signal) => hub().sessions.watchSessions({ parent: "nodes/-" }, { signal }));
      try {
        const snapshot = await watch.next((e) => e.type === WatchEventType.SNAPSHOT, "the snapshot");
        expect(snapshot.unreachable).toEqual(["nodes/badtok"]);
      } finally {
        await watch.close();
      }
      // A watch that outlives the node stops reporting it once it is removed.
      const later = readWatch((signal) => hub().sessions.watchSessions({ parent: "nodes/-" }, { signal }));
      try {
        await later.next((e) => e.type === WatchEventType.SNAPSHOT, "the snapshot");
        await hub().nodes.removeNode({ name: "nodes/badtok" });
        const gone = await later.next((e) => e.type === WatchEventType.UNREACHABLE_CHANGED, "badtok forgotten");
        expect(gone.unreachable).toEqual([]);
        await hub().nodes.addNode({ nodeId: "badtok", url: (other as ServerProcess).url, token: wrong, force: true });
      } finally {
        await later.close();
      }
      // Its error is the Hub's (what to fix), never the caller's own UNAUTHENTICATED.
      const failure = await failureOf(hub().sessions.getSession({ name: "nodes/badtok/sessions/elsewhere" }));
      expect(failure).toMatchObject({
        code: "FailedPrecondition",
        message: expect.stringMatching(
          /^the Hub cannot use node badtok: the Node at http:\/\/127\.0\.0\.1:\d+ refuses the Hub's node token \(.*node_token/,
        ),
      });
      const node = (await hub().nodes.getNode({ name: "nodes/badtok" })).node;
      expect([node?.connectivity, node?.lastError]).toEqual([
        Connectivity.OFFLINE,
        failure.message.split("badtok: ")[1],
      ]);
      expect(JSON.stringify(node)).not.toContain(wrong);
    } finally {
      await hub().nodes.removeNode({ name: "nodes/badtok" });
    }
  });

  it("says so when a Node serves another name than the one it was added under", async () => {
    await hub().nodes.addNode({
      nodeId: "misnamed",
      url: (other as ServerProcess).url,
      token: otherToken,
      force: true,
    });
    try {
      const listed = await hub().sessions.listSessions({ parent: "nodes/-" });
      expect(listed.unreachable).toEqual(["nodes/misnamed"]);
      expect(await failureOf(hub().sessions.getSession({ name: "nodes/misnamed/sessions/elsewhere" }))).toMatchObject({
        code: "FailedPrecondition",
        message: expect.stringMatching(
          /^the Hub cannot use node misnamed: the Node at .* is not misnamed .*--name misnamed$/,
        ),
      });
    } finally {
      await hub().nodes.removeNode({ name: "nodes/misnamed" });
    }
  });

  it("gets a Node's refusals marked as such over gRPC, and its answers unmarked", async () => {
    const url = (other as ServerProcess).url;
    const refused = ConnectError.from(
      await grpcClient(SessionService, url, "not-the-node-token")
        .getSession({ name: "nodes/n2/sessions/elsewhere" })
        .catch((e: unknown) => e),
    );
    expect([Code[refused.code], refusalOf(refused), refused.metadata.get(SERVER_ROLE_HEADER)]).toEqual([
      "Unauthenticated",
      "credentials",
      "node",
    ]);
    const answered = ConnectError.from(
      await grpcClient(SessionService, url, otherToken)
        .getSession({ name: "nodes/n2/sessions/ghost" })
        .catch((e: unknown) => e),
    );
    expect([Code[answered.code], refusalOf(answered)]).toEqual(["NotFound", undefined]);
  });

  it("still passes a Node's answers about the request on unchanged", async () => {
    expect(await failureOf(hub().sessions.getSession({ name: "nodes/good/sessions/ghost" }))).toEqual({
      code: "NotFound",
      message: "session nodes/good/sessions/ghost not found",
    });
  });

  it("refuses node tokens no Node could have, without echoing them", async () => {
    for (const token of ["line\r\nbreak", "with space", "tab\there", "ünïcode"]) {
      const failure = await failureOf(hub().nodes.addNode({ nodeId: "weird", url: "http://127.0.0.1:1", token }));
      expect(failure.code).toBe("InvalidArgument");
      expect(failure.message).toMatch(/^token: /);
      expect(failure.message).not.toContain(token);
    }
    expect((await hub().nodes.listNodes({})).nodes.map((n) => n.name)).toEqual(["nodes/local", "nodes/good"]);
  });

  it("refuses a Node URL that leads back to the Hub itself", async () => {
    for (const token of [hub().hub.token, "any-token-at-all"]) {
      const failure = await failureOf(hub().nodes.addNode({ nodeId: "myself", url: hub().hub.url, token }));
      expect(failure).toMatchObject({
        code: "InvalidArgument",
        message: expect.stringMatching(/^url: http:\/\/127\.0\.0\.1:\d+ leads back to this Hub/),
      });
    }
    expect((await hub().nodes.listNodes({})).nodes.map((n) => n.name)).toEqual(["nodes/local", "nodes/good"]);
  });
});

describe("a Hub whose stored Node leads back to itself", () => {
  let tmux: TestTmux;
  let home: string;
  let hub: ServerProcess | undefined;
  /** A Hub that started although it should have refused to (stopped here even then). */
  let stray: ServerProcess | undefined;

  beforeAll(async () => {
    tmux = createTestTmux();
    home = await mkdtemp(join(tmpdir(), "sa-loop-"));
  });

  afterAll(async () => {
    await stray?.stop();
    await hub?.stop();
    await tmux?.close();
    await rm(home, { recursive: true, force: true });
  });

  it("refuses to start with --node pointing at its own address", async () => {
    const port = await freePort();
    const token = testToken();
    const start = startServerProcess({
      kind: "hub",
      tmuxSocket: tmux.socketName,
      token,
      home,
      args: ["--port", String(port), "--node", `self=http://127.0.0.1:${port}`],
      env: { STARAGENT_NODE_TOKEN: token },
    });
    const outcome = await start.then(
      (started) => {
        stray = started;
        return "it started";
      },
      (err: Error) => err.message,
    );
    expect(outcome).toMatch(/--node self=http:\/\/127\.0\.0\.1:\d+: that is this Hub's own address/);
  });

  it("refuses the loop at run time: lists answer at once, calls fail clearly, nothing recurses", async () => {
    const port = await freePort();
    const token = testToken();
    await writeFile(
      join(home, "nodes.json"),
      JSON.stringify([{ id: "self", url: `http://127.0.0.1:${port}`, token, displayName: "self" }]),
      { mode: 0o600 },
    );
    hub = await startServerProcess({
      kind: "hub",
      tmuxSocket: tmux.socketName,
      token,
      home,
      args: ["--port", String(port)],
    });
    const nodes = grpcClient(NodeService, hub.url, token);
    const sessions = grpcClient(SessionService, hub.url, token);
    await waitFor(
      async () => (await nodes.getNode({ name: "nodes/self" })).node?.connectivity === Connectivity.OFFLINE,
      "the looping node OFFLINE",
      PROBLEM_SHOWN_MS,
    );
    expect((await nodes.getNode({ name: "nodes/self" })).node?.lastError).toMatch(/leads back to this Hub/);
    expect((await sessions.listSessions({ parent: "nodes/-" })).unreachable).toEqual(["nodes/self"]);
    expect(await failureOf(sessions.getSession({ name: "nodes/self/sessions/x" }))).toMatchObject({
      code: "FailedPrecondition",
      message: expect.stringMatching(/^the Hub cannot use node self: .*leads back to this Hub/),
    });
    const watch = readWatch((signal) => sessions.watchSessions({ parent: "nodes/-" }, { signal }));
    try {
      expect((await watch.next((e) => e.type === WatchEventType.SNAPSHOT, "the snapshot")).unreachable).toEqual([
        "nodes/self",
      ]);
    } finally {
      await watch.close();
    }
  });
});
