import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SessionService, WatchEventType } from "../../gen/staragent/v1/session_service_pb.js";
import { bearerInterceptor } from "../../services/common/bearer.js";
import { createLogger } from "../../services/common/log.js";
import type { RunningServer } from "../../services/common/server.js";
import { createMachine, type MachineServices, startNodeServer } from "../../services/node/index.js";
import { createTestTmux, type TestTmux } from "../support/tmux.js";
import { startHubFixture } from "./hub-fixture.js";

const TOKEN = "listener-test-token-0123456789";
/** close() must not wait for idle keep-alive sockets or open streams (its grace period is 2 s). */
const PROMPT_CLOSE_MS = 1_000;
/** A stopping process has its close grace (2 s) to spare: it must exit well before it ends. */
const PROMPT_PROCESS_EXIT_MS = 1_500;

/** POSTs a Connect JSON request over HTTP/1.1 and resolves with the status, HTTP version and body. */
function postHttp1(url: string, path: string, body: string, agent: http.Agent, token = TOKEN) {
  return new Promise<{ status: number; version: string; body: string }>((resolve, reject) => {
    const req = http.request(`${url}${path}`, {
      method: "POST",
      agent,
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    });
    req.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => {
        text += c;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, version: res.httpVersion, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}

describe("one-port listener", () => {
  let tmux: TestTmux;
  let home: string;
  let machine: MachineServices;
  let server: RunningServer | undefined;

  beforeEach(async () => {
    tmux = createTestTmux();
    home = await mkdtemp(join(tmpdir(), "sa-listener-"));
    await tmux.run("new-session", "-d", "-s", "by-hand", "sleep 600");
    const log = createLogger("test", "error");
    machine = createMachine({ nodeName: "n1", home, tmuxSocket: tmux.socketName, env: process.env, log });
    server = await startNodeServer({ machine, host: "127.0.0.1", port: 0, nodeToken: TOKEN, log });
  });

  afterEach(async () => {
    try {
      await machine?.close();
      await server?.close();
    } finally {
      await tmux.close();
      await rm(home, { recursive: true, force: true });
    }
  });

  it("serves Connect JSON over HTTP/1.1 and gRPC over h2c on the same port", async () => {
    const running = server as RunningServer;
    const agent = new http.Agent({ keepAlive: true });
    try {
      const h1 = await postHttp1(running.url, "/staragent.v1.SessionService/ListSessions", "{}", agent);
      expect(h1.status).toBe(200);
      expect(h1.version).toBe("1.1");
      expect(JSON.parse(h1.body).sessions.map((s: { name: string }) => s.name)).toEqual(["nodes/n1/sessions/by-hand"]);
    } finally {
      agent.destroy();
    }

    const grpc = createClient(SessionService, createGrpcTransport({ baseUrl: running.url, interceptors: [bearer()] }));
    const res = await grpc.listSessions({ parent: "nodes/n1" });
    expect(res.sessions.map((s) => s.tmuxSession)).toEqual(["by-hand"]);

    // The same port speaks HTTP/2 with prior knowledge (no upgrade): a raw h2 session gets an answer.
    const session = http2.connect(running.url);
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const stream = session.request({ ":method": "GET", ":path": "/no-such-page" });
        let status = 0;
        stream.on("response", (headers) => {
          status = Number(headers[":status"]);
        });
        stream.on("end", () => resolve(status));
        stream.on("error", reject);
        stream.resume();
        stream.end();
      });
      expect(status).toBe(404);
    } finally {
      session.close();
    }
  });

  it("closes promptly with an open WatchSessions stream and keep-alive sockets, and frees the port", async () => {
    const running = server as RunningServer;
    const agent = new http.Agent({ keepAlive: true });
    const h1 = await postHttp1(running.url, "/staragent.v1.SessionService/ListSessions", "{}", agent);
    expect(h1.status).toBe(200);
    expect(agent.freeSockets).not.toEqual({});

    // A connection that has not sent a byte yet (it would otherwise wait for its first-bytes timeout).
    const silent = net.connect(running.port, "127.0.0.1");
    await new Promise((resolve) => silent.once("connect", resolve));
    const silentClosed = new Promise((resolve) => silent.once("close", resolve));
    const client = createClient(
      SessionService,
      createGrpcTransport({ baseUrl: running.url, interceptors: [bearer()] }),
    );
    const stream = client.watchSessions({ parent: "nodes/-" })[Symbol.asyncIterator]();
    const first = await stream.next();
    expect(first.done).toBe(false);
    expect(first.value?.type).toBe(WatchEventType.SNAPSHOT);
    const rest = drain(stream);

    const started = Date.now();
    await machine.close();
    await running.close();
    server = undefined;
    const took = Date.now() - started;
    agent.destroy();

    expect(took).toBeLessThan(PROMPT_CLOSE_MS);
    // The machine's close ends its watch streams cleanly, before the server cuts connections.
    expect(await rest).toBe("ended");
    await silentClosed;
    expect(await portIsFree(running.port)).toBe(true);
  });
});

/**
 * How a stream ends once its server stops: "ended" when it ends cleanly, else its error's code (and
 * message). Heartbeats and changes before the end are read past.
 */
async function drain(stream: AsyncIterator<unknown>): Promise<string> {
  try {
    for (let r = await stream.next(); !r.done; r = await stream.next()) {
      /* read past heartbeats until the server ends the stream */
    }
    return "ended";
  } catch (err) {
    const e = ConnectError.from(err);
    return `${Code[e.code]}: ${e.rawMessage}`;
  }
}

function bearer(): Interceptor {
  return bearerInterceptor(TOKEN);
}

describe("a Hub process stopping", () => {
  it("exits promptly on SIGTERM with an open WatchSessions stream and a keep-alive socket, freeing its port", async () => {
    const f = await startHubFixture();
    const agent = new http.Agent({ keepAlive: true });
    try {
      const h1 = await postHttp1(f.hub.url, "/staragent.v1.SessionService/ListSessions", "{}", agent, f.hub.token);
      expect(h1.status).toBe(200);
      const stream = f.sessions.watchSessions({ parent: "nodes/-" })[Symbol.asyncIterator]();
      expect((await stream.next()).value?.type).toBe(WatchEventType.SNAPSHOT);
      const ended = drain(stream);

      const exited = new Promise((resolve) => f.hub.process.once("exit", resolve));
      const started = Date.now();
      f.hub.process.kill("SIGTERM");
      await exited;
      expect(Date.now() - started).toBeLessThan(PROMPT_PROCESS_EXIT_MS);
      // The Hub ends its streams cleanly as it stops, rather than leaving them to a cut connection.
      expect(await ended).toBe("ended");
      expect(await portIsFree(Number(new URL(f.hub.url).port))).toBe(true);
    } finally {
      agent.destroy();
      await f.close();
    }
  });
});
