import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ConnectRouter,
  createClient,
  createRouterTransport,
  type HandlerContext,
} from "@connectrpc/connect";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { NodeSchema, NodeService } from "../../gen/staragent/v1/node_service_pb.js";
import { type Session, SessionSchema } from "../../gen/staragent/v1/session_pb.js";
import {
  SessionService,
  WatchEventType,
  type WatchSessionsResponse,
  WatchSessionsResponseSchema,
} from "../../gen/staragent/v1/session_service_pb.js";
import { rejectionOf } from "../../test/support/codes.js";
import { waitFor } from "../../test/support/wait.js";
import { AsyncQueue } from "../common/async-queue.js";
import { createLogger } from "../common/log.js";
import { HubSessionService } from "./hub-session-service.js";
import type { NodeConnector } from "./node-connection.js";
import { NODE_CALL_TIMEOUT_MS, NodeRegistry } from "./node-registry.js";

const session = (node: string, tmux: string): Session =>
  create(SessionSchema, { name: `nodes/${node}/sessions/${tmux}`, node, tmuxSession: tmux });

/**
 * An in-memory machine that answers as node `id`: its sessions, a watch fed by `events`, and what
 * each call saw of its deadline.
 */
class MemoryNode {
  readonly deadlines: Array<{ method: string; timeoutMs: number | undefined }> = [];
  readonly watches = new Set<AsyncQueue<WatchSessionsResponse>>();

  constructor(
    readonly id: string,
    readonly sessions: Session[],
  ) {}

  routes = (router: ConnectRouter) => {
    router.service(NodeService, {
      getNode: () => ({ node: create(NodeSchema, { name: `nodes/${this.id}`, version: "test", hostname: this.id }) }),
    });
    router.service(SessionService, {
      listSessions: (_req, ctx) => {
        this.saw("listSessions", ctx);
        return { sessions: this.sessions, nextPageToken: "", unreachable: [] };
      },
      getSession: (req, ctx) => {
        this.saw("getSession", ctx);
        const found = this.sessions.find((s) => s.name === req.name);
        if (!found) throw new ConnectError(`session ${req.name} not found`, Code.NotFound);
        return { session: found };
      },
      stopSession: (req) => {
        throw new ConnectError(
          `${req.name} was adopted; stop it with force to kill it anyway`,
          Code.FailedPrecondition,
        );
      },
      watchSessions: (_req, ctx) => this.watch(ctx),
    });
  };

  /** Sends `event` to every open watch. */
  push(event: WatchSessionsResponse): void {
    for (const queue of this.watches) queue.push(event);
  }

  private async *watch(ctx: HandlerContext): AsyncGenerator<WatchSessionsResponse> {
    const queue = new AsyncQueue<WatchSessionsResponse>();
    queue.push(create(WatchSessionsResponseSchema, { type: WatchEventType.SNAPSHOT, sessions: this.sessions }));
    this.watches.add(queue);
    ctx.signal.addEventListener("abort", () => queue.close(), { once: true });
    try {
      yield* queue;
    } finally {
      this.watches.delete(queue);
    }
  }

  private saw(method: string, ctx: HandlerContext): void {
    this.deadlines.push({ method, timeoutMs: ctx.timeoutMs() });
  }
}

/** A Node the Hub cannot reach: every call fails as a refused connection does. */
function unreachableRoutes(router: ConnectRouter): void {
  const refused = () => {
    throw new ConnectError("connect ECONNREFUSED 10.0.0.9:8081", Code.Unavailable);
  };
  router.service(NodeService, { getNode: refused });
  router.service(SessionService, { listSessions: refused, getSession: refused, watchSessions: refused });
}

/** A Node that refuses the Hub's token. */
function refusingRoutes(router: ConnectRouter): void {
  const refused = () => {
    throw new ConnectError("missing or invalid credentials", Code.Unauthenticated);
  };
  router.service(NodeService, { getNode: refused });
  router.service(SessionService, { listSessions: refused, getSession: refused });
}

describe("the Hub's SessionService over in-memory Nodes", () => {
  let home: string;
  let registry: NodeRegistry;
  let local: MemoryNode;
  let w1: MemoryNode;
  const callers = new Set<AbortController>();

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), "sa-hub-routing-"));
    local = new MemoryNode("local", [session("local", "here")]);
    w1 = new MemoryNode("w1", [session("w1", "b"), session("w1", "a")]);
    const byUrl: Record<string, (router: ConnectRouter) => void> = {
      "http://w1.test": w1.routes,
      "http://gone.test": unreachableRoutes,
      "http://locked.test": refusingRoutes,
    };
    const connect: NodeConnector = (node) => {
      const routes = byUrl[node.url];
      if (!routes) throw new Error(`no in-memory node at ${node.url}`);
      return { transport: createRouterTransport(routes), close: () => undefined };
    };
    registry = new NodeRegistry({
      localTransport: createRouterTransport(local.routes),
      home,
      log: createLogger("test", "error", () => undefined),
      commandLineNodes: [
        { id: "w1", url: "http://w1.test" },
        { id: "gone", url: "http://gone.test" },
        { id: "locked", url: "http://locked.test" },
      ],
      commandLineToken: "token-of-the-nodes",
      instanceId: "hub-under-test",
      connect,
    });
    await registry.load();
  });

  afterEach(async () => {
    for (const caller of callers) caller.abort();
    callers.clear();
    await registry?.close();
    await rm(home, { recursive: true, force: true });
  });

  const hub = () =>
    createClient(
      SessionService,
      createRouterTransport((router) =>
        router.service(
          SessionService,
          new HubSessionService(
            registry,
            createLogger("test", "error", () => undefined),
          ),
        ),
      ),
    );
  /** The code and message `call` fails with, for one assertion on both. */
  const codeOf = async (call: Promise<unknown>) => {
    const e = await rejectionOf(call);
    return `${Code[e.code]}: ${e.rawMessage}`;
  };

  it("routes a call by the node in its name, and relays a Node's answer with its code", async () => {
    const res = await hub().getSession({ name: "nodes/w1/sessions/a" });
    expect(res.session?.name).toBe("nodes/w1/sessions/a");
    expect((await hub().getSession({ name: "nodes/local/sessions/here" })).session?.node).toBe("local");
    expect(await codeOf(hub().getSession({ name: "nodes/w1/sessions/nope" }))).toBe(
      "NotFound: session nodes/w1/sessions/nope not found",
    );
    expect(await codeOf(hub().stopSession({ name: "nodes/w1/sessions/a" }))).toBe(
      "FailedPrecondition: nodes/w1/sessions/a was adopted; stop it with force to kill it anyway",
    );
    expect(await codeOf(hub().getSession({ name: "nodes/elsewhere/sessions/a" }))).toBe(
      "NotFound: node nodes/elsewhere not found",
    );
  });

  it("answers for Nodes it cannot use with its own errors naming them", async () => {
    expect(await codeOf(hub().getSession({ name: "nodes/gone/sessions/a" }))).toMatch(
      /^Unavailable: node gone is unreachable: .*ECONNREFUSED/,
    );
    await waitFor(() => registry.get("locked").problem === "refused", "the refusing node's health check");
    expect(await codeOf(hub().getSession({ name: "nodes/locked/sessions/a" }))).toMatch(
      /^FailedPrecondition: the Hub cannot use node locked: /,
    );
  });

  it("passes the caller's deadline on to the Node, and caps it for lists across nodes", async () => {
    await hub().getSession({ name: "nodes/w1/sessions/a" }, { timeoutMs: 3_000 });
    await hub().getSession({ name: "nodes/w1/sessions/b" });
    await hub().listSessions({ parent: "nodes/-" }, { timeoutMs: 60_000 });
    const [withDeadline, without, list] = w1.deadlines;
    expect(withDeadline?.timeoutMs).toBeGreaterThan(0);
    expect(withDeadline?.timeoutMs).toBeLessThanOrEqual(3_000);
    expect(without).toEqual({ method: "getSession", timeoutMs: undefined });
    expect(list?.timeoutMs).toBeGreaterThan(0);
    expect(list?.timeoutMs).toBeLessThanOrEqual(NODE_CALL_TIMEOUT_MS);
  });

  it("merges lists across nodes, ordered by node and session, with the unreachable ones named", async () => {
    const res = await hub().listSessions({ parent: "nodes/-" });
    expect(res.sessions.map((s) => s.name)).toEqual([
      "nodes/local/sessions/here",
      "nodes/w1/sessions/a",
      "nodes/w1/sessions/b",
    ]);
    expect(res.unreachable).toEqual(["nodes/gone", "nodes/locked"]);
  });

  it("merges watches across nodes: one snapshot, then each node's changes", async () => {
    const caller = new AbortController();
    callers.add(caller);
    const stream = hub().watchSessions({ parent: "nodes/-" }, { signal: caller.signal })[Symbol.asyncIterator]();
    const first = (await stream.next()).value as WatchSessionsResponse;
    expect(WatchEventType[first.type]).toBe("SNAPSHOT");
    expect(first.sessions.map((s) => s.name)).toEqual([
      "nodes/local/sessions/here",
      "nodes/w1/sessions/a",
      "nodes/w1/sessions/b",
    ]);
    expect(first.unreachable).toEqual(["nodes/gone", "nodes/locked"]);
    w1.push(create(WatchSessionsResponseSchema, { type: WatchEventType.UPSERTED, sessions: [session("w1", "c")] }));
    const next = (await stream.next()).value as WatchSessionsResponse;
    expect([WatchEventType[next.type], next.sessions.map((s) => s.name)]).toEqual([
      "UPSERTED",
      ["nodes/w1/sessions/c"],
    ]);
    caller.abort();
    await waitFor(() => w1.watches.size === 0 && local.watches.size === 0, "the Nodes' watches to end");
  });
});
