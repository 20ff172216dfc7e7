import { create } from "@bufbuild/protobuf";
import { type CallOptions, Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { Connectivity } from "../../gen/staragent/v1/node_service_pb.js";
import { type Session, SessionSchema } from "../../gen/staragent/v1/session_pb.js";
import type {
  AdoptSessionRequest,
  CreateSessionRequest,
  GetChatRequest,
  GetSessionRequest,
  ListAdoptableSessionsRequest,
  ListSessionsRequest,
  MarkSessionSeenRequest,
  SendChatMessageRequest,
  SessionService,
  StopSessionRequest,
  WatchSessionsRequest,
  WatchSessionsResponse,
} from "../../gen/staragent/v1/session_service_pb.js";
import { AsyncQueue } from "../common/async-queue.js";
import { Disposables, onAbort } from "../common/disposables.js";
import type { Logger } from "../common/log.js";
import { MAX_PAGE_SIZE, paginate } from "../common/pagination.js";
import { LOCAL_NODE_ID, parseParent, parseSessionName } from "../common/resource-names.js";
import { parseSessionFilter } from "../common/session-filter.js";
import { BUILT_IN_FILTER_NAMES } from "../node/index.js";
import { callerEnd } from "./node-errors.js";
import { NODE_CALL_TIMEOUT_MS, type NodeEntry, type NodeRegistry } from "./node-registry.js";
import { type LastKnownSessions, WatchMerge } from "./watch-merge.js";

/** First wait before re-watching a node whose stream broke; doubles up to the maximum. */
const REWATCH_INITIAL_MS = 500;
/** Longest wait between attempts to re-watch a node. */
const REWATCH_MAX_MS = 15_000;

/**
 * The Hub's SessionService: every call goes to the node named in its resource name (the Hub's own
 * machine in-process, remote Nodes over gRPC) with the caller's deadline; `nodes/-` fans out and
 * merges. A Node's answers about a request reach the caller unchanged; a Node the Hub cannot use is
 * the Hub's error, never the caller's: UNAVAILABLE or FAILED_PRECONDITION naming the node for
 * single calls, and in `unreachable` (with its last known sessions) for lists and watches.
 */
export class HubSessionService implements ServiceImpl<typeof SessionService> {
  /** Last sessions seen per node, shown (marked unreachable) while a node cannot be reached. */
  private readonly lastKnown: LastKnownSessions = new Map();

  constructor(
    private readonly registry: NodeRegistry,
    private readonly log: Logger,
  ) {}

  async listSessions(req: ListSessionsRequest, ctx: HandlerContext) {
    const nodes = this.nodesOf(parseParent(req.parent));
    const matches = parseSessionFilter(req.filter, BUILT_IN_FILTER_NAMES);
    const unreachable: string[] = [];
    const perNode = await Promise.all(
      nodes.map(async (node) => {
        try {
          const sessions = await this.allSessions(node, req.filter, ctx);
          if (req.filter === "") this.lastKnown.set(node.id, sessions);
          return sessions;
        } catch (err) {
          if (node.local) throw this.registry.relayError(node, err, ctx);
          const own = callerEnd(ctx, err);
          if (own) throw own;
          unreachable.push(`nodes/${node.id}`);
          return (this.lastKnown.get(node.id) ?? [])
            .filter(matches)
            .map((s) => create(SessionSchema, { ...s, nodeUnreachable: true }));
        }
      }),
    );
    const { page, nextPageToken } = paginate(
      perNode.flat(),
      sessionKey,
      req.pageSize,
      req.pageToken,
      `${req.parent}|${req.filter}`,
    );
    return { sessions: page, nextPageToken, unreachable: unreachable.sort() };
  }

  getSession(req: GetSessionRequest, ctx: HandlerContext) {
    return this.forward(this.nodeOfName(req.name), ctx, (n, o) => n.sessions.getSession(req, o));
  }

  /**
   * Creates on the named node with the caller's deadline. A caller that gives up does not undo a
   * create the node has begun: the session then exists (lists show it, a retry gets ALREADY_EXISTS);
   * the node starts nothing once the deadline has passed.
   */
  createSession(req: CreateSessionRequest, ctx: HandlerContext) {
    const id = req.parent === "" ? LOCAL_NODE_ID : parseParent(req.parent);
    if (id === "-") throw new ConnectError("parent: name one node (nodes/{node}), not nodes/-", Code.InvalidArgument);
    const node = this.registry.get(id);
    return this.forward(node, ctx, (n, o) => n.sessions.createSession({ ...req, parent: `nodes/${n.id}` }, o));
  }

  stopSession(req: StopSessionRequest, ctx: HandlerContext) {
    return this.forward(this.nodeOfName(req.name), ctx, (n, o) => n.sessions.stopSession(req, o));
  }

  async listAdoptableSessions(req: ListAdoptableSessionsRequest, ctx: HandlerContext) {
    const nodes = this.nodesOf(parseParent(req.parent));
    const unreachable: string[] = [];
    const lists = await Promise.all(
      nodes.map(async (node) => {
        try {
          this.registry.admit(node);
          const res = await node.sessions.listAdoptableSessions(
            { parent: `nodes/${node.id}` },
            this.registry.callOptions(ctx, listTimeout(node)),
          );
          this.registry.markSeen(node.id);
          return res.adoptableSessions;
        } catch (err) {
          if (node.local) throw this.registry.relayError(node, err, ctx);
          const own = callerEnd(ctx, err);
          if (own) throw own;
          this.registry.suspect(node.id);
          unreachable.push(`nodes/${node.id}`);
          return [];
        }
      }),
    );
    return { adoptableSessions: lists.flat(), unreachable: unreachable.sort() };
  }

  adoptSession(req: AdoptSessionRequest, ctx: HandlerContext) {
    return this.forward(this.nodeOfName(req.name), ctx, (n, o) => n.sessions.adoptSession(req, o));
  }

  markSessionSeen(req: MarkSessionSeenRequest, ctx: HandlerContext) {
    return this.forward(this.nodeOfName(req.name), ctx, (n, o) => n.sessions.markSessionSeen(req, o));
  }

  getChat(req: GetChatRequest, ctx: HandlerContext) {
    return this.forward(this.nodeOfName(req.name), ctx, (n, o) => n.sessions.getChat(req, o));
  }

  sendChatMessage(req: SendChatMessageRequest, ctx: HandlerContext) {
    return this.forward(this.nodeOfName(req.name), ctx, (n, o) => n.sessions.sendChatMessage(req, o));
  }

  /**
   * Merges the watch streams of the nodes of `parent` (`watch-merge.ts`): one SNAPSHOT once every
   * node has answered or failed, then their changes. A node whose stream breaks, or that its health
   * check finds OFFLINE (a hung Node's stream never breaks by itself), is reported at once in
   * `unreachable` (UNREACHABLE_CHANGED) and watched again with backoff, at the latest when its health
   * check sees it back; its fresh snapshot is then sent as changes.
   */
  async *watchSessions(req: WatchSessionsRequest, ctx: HandlerContext): AsyncGenerator<WatchSessionsResponse> {
    const nodes = this.nodesOf(parseParent(req.parent));
    const queue = new AsyncQueue<WatchSessionsResponse>();
    const merge = new WatchMerge(
      nodes.map((node) => node.id),
      this.lastKnown,
    );
    const send = (events: WatchSessionsResponse[]) => {
      for (const event of events) queue.push(event);
    };
    const followers = nodes.map((node) => this.follow(node, merge, send, ctx));
    const unlisten = onAbort(ctx.signal, () => queue.close());
    send(merge.start());
    try {
      yield* queue;
    } finally {
      unlisten();
      await Promise.allSettled(followers);
    }
  }

  /** Watches one node for a merged watch until the caller leaves, re-watching it while it fails. */
  private async follow(
    node: NodeEntry,
    merge: WatchMerge,
    send: (events: WatchSessionsResponse[]) => void,
    ctx: HandlerContext,
  ): Promise<void> {
    let backoff = REWATCH_INITIAL_MS;
    const removed = () => !this.registry.isCurrent(node);
    const offline = () => !node.local && node.connectivity === Connectivity.OFFLINE;
    while (!ctx.signal.aborted) {
      if (removed()) {
        send(merge.nodeRemoved(node.id));
        return;
      }
      if (!offline()) {
        // One attempt; it ends when the node's health check finds it OFFLINE, or with the caller.
        const attempt = new AbortController();
        const cleanup = new Disposables();
        cleanup.add(onAbort(ctx.signal, () => attempt.abort()));
        cleanup.add(
          this.registry.onChange(() => {
            if (offline() || removed()) attempt.abort();
          }),
        );
        try {
          const options = this.registry.callOptions(ctx);
          for await (const event of node.sessions.watchSessions(
            { parent: `nodes/${node.id}` },
            { ...options, signal: attempt.signal },
          )) {
            this.registry.markSeen(node.id);
            backoff = REWATCH_INITIAL_MS;
            send(merge.nodeEvent(node.id, event));
          }
        } catch (err) {
          if (ctx.signal.aborted) return;
          if (!attempt.signal.aborted) this.registry.suspect(node.id);
          this.log.debug("watch of a node broke", {
            node: node.id,
            error: err instanceof Error ? err.message : String(err),
          });
        } finally {
          cleanup.dispose();
        }
      }
      if (ctx.signal.aborted) return;
      if (removed()) continue;
      send(merge.nodeUnreachable(node.id));
      // Retry after the backoff, or as soon as the registry changes (the node back ONLINE).
      const until = Date.now() + backoff;
      while (!ctx.signal.aborted && Date.now() < until) {
        await this.registry.nextChange(until - Date.now(), ctx.signal);
        if (!offline() || removed()) break;
      }
      backoff = Math.min(backoff * 2, REWATCH_MAX_MS);
    }
  }

  /** Every session of `node` matching `filter` (all pages), with the caller's deadline capped for lists. */
  private async allSessions(node: NodeEntry, filter: string, ctx: HandlerContext): Promise<Session[]> {
    this.registry.admit(node);
    const out: Session[] = [];
    let pageToken = "";
    try {
      do {
        const res = await node.sessions.listSessions(
          { parent: `nodes/${node.id}`, filter, pageSize: MAX_PAGE_SIZE, pageToken },
          this.registry.callOptions(ctx, listTimeout(node)),
        );
        out.push(...res.sessions);
        pageToken = res.nextPageToken;
      } while (pageToken !== "");
    } catch (err) {
      if (!callerEnd(ctx, err)) this.registry.suspect(node.id);
      throw err;
    }
    this.registry.markSeen(node.id);
    return out;
  }

  /** Calls `node` for the caller of `ctx`; a failure becomes the error the caller should see. */
  private async forward<T>(
    node: NodeEntry,
    ctx: HandlerContext,
    call: (node: NodeEntry, options: CallOptions) => Promise<T>,
  ): Promise<T> {
    this.registry.admit(node);
    try {
      const result = await call(node, this.registry.callOptions(ctx));
      this.registry.markSeen(node.id);
      return result;
    } catch (err) {
      throw this.registry.relayError(node, err, ctx);
    }
  }

  private nodeOfName(name: string): NodeEntry {
    return this.registry.get(parseSessionName(name).node);
  }

  private nodesOf(parent: string): NodeEntry[] {
    return parent === "-" ? this.registry.list() : [this.registry.get(parent)];
  }
}

/**
 * Lists across nodes answer even when a remote Node accepts connections but never replies (a wedged
 * process, a dropped network path): such a Node is then listed as unreachable. The Hub's own machine
 * answers in-process and has no timeout.
 */
function listTimeout(node: NodeEntry): number | undefined {
  return node.local ? undefined : NODE_CALL_TIMEOUT_MS;
}

/**
 * The order and pagination key of the Hub's session lists: node, then tmux session name. NUL sorts
 * before every character a name may hold, so node `w1` comes before `w1-x`.
 */
function sessionKey(session: Session): string {
  return `${session.node}\u0000${session.tmuxSession}`;
}
