import { readdir } from "node:fs/promises";
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { type Client, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { SessionService, WatchEventType } from "../../gen/staragent/v1/session_service_pb.js";
import { sleep } from "../../services/common/async-queue.js";
import { bearerInterceptor } from "../../services/common/bearer.js";
import { staragentRegistry } from "../../services/common/descriptors.js";
import { DEFAULT_LISTENER_LIMITS, type ListenerLimits } from "../../services/common/listener.js";
import { createLogger } from "../../services/common/log.js";
import { type RunningServer, startServer } from "../../services/common/server.js";
import { clientFrom } from "../foundation/from-address.js";
import { testToken } from "../foundation/hub-fixture.js";
import { type ServerProcess, startServerProcess } from "../support/servers.js";
import { createTestTmux, type TestTmux } from "../support/tmux.js";
import { waitFor } from "../support/wait.js";

const TOKEN = "half-open-test-token-0123456789";
/** How often the test stream below sends a heartbeat: well inside the short idle limit. */
const TEST_HEARTBEAT_MS = 100;
/** Short limits, so the tests see each one act in a fraction of a second. */
const SHORT_LIMITS: ListenerLimits = {
  firstBytesTimeoutMs: 300,
  headersTimeoutMs: 300,
  requestTimeoutMs: 600,
  checkIntervalMs: 50,
  idleTimeoutMs: 600,
  maxConnectionsPerPeer: 4,
  maxConnections: 1_000,
  maxUnauthenticatedPerPeer: 4,
  maxUnauthenticated: 1_000,
  // Far beyond the tests' time: the limits above are what they watch.
  unauthenticatedIdleMs: 60_000,
  unauthenticatedStreams: 8,
  maxStreams: 100,
};
/** A live stream must outlive this many idle limits. */
const IDLE_LIMITS_OUTLIVED = 3;

/** A server whose one real method streams heartbeats until the caller goes away. */
async function startTestServer(limits: Partial<ListenerLimits>): Promise<RunningServer> {
  return startServer({
    role: "node",
    host: "127.0.0.1",
    port: 0,
    routes: (router) => {
      router.service(SessionService, {
        async *watchSessions(_req, ctx) {
          while (!ctx.signal.aborted) {
            yield { type: WatchEventType.HEARTBEAT };
            await sleep(TEST_HEARTBEAT_MS, ctx.signal);
          }
        },
      });
    },
    services: [SessionService],
    registry: staragentRegistry(),
    auth: { tokens: [{ token: TOKEN, kind: "node" }] },
    log: createLogger("test", "error"),
    listenerLimits: limits,
  });
}

/** A raw TCP connection from `localAddress`, resolved once connected. */
async function connect(port: number, localAddress = "127.0.0.1"): Promise<net.Socket> {
  const socket = net.connect({ port, host: "127.0.0.1", localAddress });
  socket.on("error", () => undefined);
  await new Promise((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("close", () => reject(new Error("closed before connecting")));
  });
  return socket;
}

function closed(socket: net.Socket): Promise<void> {
  return socket.destroyed ? Promise.resolve() : new Promise((resolve) => socket.once("close", () => resolve()));
}

/**
 * Slack past a limit within which its close must come: timers fire late on a loaded machine, and the
 * limits are checked every `checkIntervalMs`; less than the gap to the next limit that could close
 * the same connection (300 ms), so a close in the window is the limit's own.
 */
const CLOSE_SLACK_MS = 280;

/**
 * Asserts that `ended` (a connection's close) comes from the limit `limitMs`: not before it (an
 * immediate close, or one for another reason, fails) and within CLOSE_SLACK_MS after it.
 */
async function expectClosedAtLimit(ended: Promise<void>, since: number, limitMs: number): Promise<void> {
  await ended;
  const took = Date.now() - since;
  expect(took, "closed before its limit").toBeGreaterThanOrEqual(limitMs);
  expect(took, "closed well after its limit").toBeLessThan(limitMs + CLOSE_SLACK_MS);
}

/** One HTTP/1.1 request from `localAddress`: its status, or "closed" when the connection was closed unanswered. */
function status(port: number, localAddress: string): Promise<number | "closed"> {
  return new Promise((resolve) => {
    const req = http.request({ host: "127.0.0.1", port, path: "/no-such-page", localAddress, agent: false });
    req.on("response", (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", () => resolve("closed"));
    req.end();
  });
}

/** Reads heartbeats of a WatchSessions stream for `ms`; resolves with how many arrived. */
async function heartbeatsFor(client: Client<typeof SessionService>, ms: number): Promise<number> {
  const abort = new AbortController();
  let count = 0;
  const reading = (async () => {
    for await (const event of client.watchSessions({}, { signal: abort.signal })) {
      if (event.type === WatchEventType.HEARTBEAT) count++;
    }
  })().catch((err: unknown) => {
    if (!abort.signal.aborted) throw err;
  });
  await sleep(ms);
  abort.abort();
  await reading;
  return count;
}

describe("connections that stall are closed (short limits)", () => {
  let server: RunningServer;
  const sockets: net.Socket[] = [];
  beforeAll(async () => {
    server = await startTestServer(SHORT_LIMITS);
  });
  afterEach(() => {
    for (const socket of sockets.splice(0)) socket.destroy();
  });
  afterAll(async () => {
    await server?.close();
  });

  it("a connection that never sends a byte", async () => {
    const since = Date.now();
    const socket = await connect(server.port);
    sockets.push(socket);
    await expectClosedAtLimit(closed(socket), since, SHORT_LIMITS.firstBytesTimeoutMs);
  });

  it("a connection that sends part of the HTTP/2 preface and stalls", async () => {
    const since = Date.now();
    const socket = await connect(server.port);
    sockets.push(socket);
    socket.write("PRI * HTTP/2.0\r\n");
    await expectClosedAtLimit(closed(socket), since, SHORT_LIMITS.firstBytesTimeoutMs);
  });

  it("an HTTP/1.1 request whose headers drip in, one byte at a time, never ending", async () => {
    const since = Date.now();
    const socket = await connect(server.port);
    sockets.push(socket);
    socket.write("GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    const dripping = (async () => {
      while (!socket.destroyed) {
        socket.write("X");
        await sleep(SHORT_LIMITS.headersTimeoutMs / 6);
      }
    })();
    await expectClosedAtLimit(closed(socket), since, SHORT_LIMITS.headersTimeoutMs);
    await dripping;
  });

  it("an HTTP/2 session that opens and then says nothing", async () => {
    const since = Date.now();
    const session = http2.connect(server.url);
    session.on("error", () => undefined);
    const ended = new Promise<void>((resolve) => session.once("close", () => resolve()));
    await new Promise((resolve) => session.once("connect", resolve));
    await expectClosedAtLimit(ended, since, SHORT_LIMITS.idleTimeoutMs);
  });

  it("a live WatchSessions stream with heartbeats outlives the idle limit, over HTTP/2 and HTTP/1.1", async () => {
    const duration = SHORT_LIMITS.idleTimeoutMs * IDLE_LIMITS_OUTLIVED;
    const expected = Math.floor(duration / TEST_HEARTBEAT_MS / 2);
    const grpc = createClient(
      SessionService,
      createGrpcTransport({ baseUrl: server.url, interceptors: [bearerInterceptor(TOKEN)] }),
    );
    const connect = createClient(
      SessionService,
      createConnectTransport({ baseUrl: server.url, httpVersion: "1.1", interceptors: [bearerInterceptor(TOKEN)] }),
    );
    const [overH2, overH1] = await Promise.all([heartbeatsFor(grpc, duration), heartbeatsFor(connect, duration)]);
    expect(overH2).toBeGreaterThan(expected);
    expect(overH1).toBeGreaterThan(expected);
  });
});

describe("connections per peer address are capped", () => {
  let server: RunningServer;
  const sockets: net.Socket[] = [];
  beforeAll(async () => {
    server = await startTestServer({ maxConnectionsPerPeer: 4 });
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await server?.close();
  });

  it("makes room for a peer's new connection by closing its oldest unauthenticated one, and serves other peers", async () => {
    for (let i = 0; i < 4; i++) sockets.push(await connect(server.port, "127.0.7.1"));
    const fifth = await connect(server.port, "127.0.7.1");
    sockets.push(fifth);
    await closed(sockets[0] as net.Socket);
    expect(fifth.destroyed).toBe(false);
    expect(await status(server.port, "127.0.7.1")).toBe(404);
    expect(await status(server.port, "127.0.7.2")).toBe(404);
  });
});

describe("a Node process under a flood of half-open sockets", () => {
  let tmux: TestTmux;
  let node: ServerProcess;
  const flood: net.Socket[] = [];
  /** Sockets in the flood: far more than the per-peer cap (256). */
  const FLOOD = 2_000;
  /** Descriptors a Node may hold beyond its idle count during the flood: the cap and some slack. */
  const FLOOD_FD_BUDGET = 256 + 40;
  /** Descriptors beyond the idle count that may linger once the flood is gone. */
  const SETTLED_FD_SLACK = 10;

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
    for (const socket of flood) socket.destroy();
    await node?.stop();
    await tmux?.close();
  });

  const fds = async () => (await readdir(`/proc/${node.process.pid}/fd`)).length;

  it("holds at most its per-peer cap, keeps serving others, and returns to its idle count", async () => {
    const client = clientFrom(SessionService, node.url, "127.0.8.2", node.token);
    await client.listSessions({});
    const idle = await fds();
    const { port } = new URL(node.url);
    for (let i = 0; i < FLOOD; i++) {
      const socket = net.connect({ port: Number(port), host: "127.0.0.1", localAddress: "127.0.8.1" });
      socket.on("error", () => undefined);
      socket.on("connect", () => socket.write("GET / HTTP/1.1\r\nHost: x\r\n"));
      flood.push(socket);
    }
    await waitFor(() => flood.every((s) => s.destroyed || s.bytesWritten > 0), "every flood socket to connect");
    // Unauthenticated, they have their own smaller budget: the oldest are closed to make room.
    await waitFor(
      () => flood.filter((s) => !s.destroyed).length <= DEFAULT_LISTENER_LIMITS.maxUnauthenticatedPerPeer,
      "the Node to close the sockets over the unauthenticated budget",
    );
    expect(await fds()).toBeLessThanOrEqual(idle + FLOOD_FD_BUDGET);
    expect((await client.listSessions({})).sessions).toEqual([]);
    expect(
      node
        .stderr()
        .split("\n")
        .filter((l) => l.includes("dropping unauthenticated connections to make room")),
    ).toHaveLength(1);

    for (const socket of flood) socket.destroy();
    await waitFor(async () => (await fds()) <= idle + SETTLED_FD_SLACK, "the Node's descriptors to return to normal");
  });
});
