import { create } from "@bufbuild/protobuf";
import { type CallOptions, Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { Connectivity } from "../../gen/staragent/v1/node_service_pb.js";
import { type Session, SessionSchema } from "../../gen/staragent/v1/session_pb.js";
import type {
  AdoptSessionRequest,
  AnswerPromptRequest,
  CancelQueuedMessageRequest,
  CreateDirectoryRequest,
  CreateSessionRequest,
  GetChatRequest,
  GetSessionRequest,
  InterruptSessionRequest,
  ListAdoptableSessionsRequest,
  ListConversationsRequest,
  ListDirectoriesRequest,
  ListQueuedMessagesRequest,
  ListSessionsRequest,
  MarkSessionSeenRequest,
  QueueChatMessageRequest,
  SendChatMessageRequest,
  SessionService,
  StopSessionRequest,
  WatchSessionsRequest,
  WatchSessionsResponse,
} from "../../gen/staragent/v1/session_service_pb.js";
import { AsyncQueue } from "../common/async-queue.js";
import { peerAddressKey, principalKey } from "../common/context-keys.js";
import { Disposables, onAbort } from "../common/disposables.js";
import { ON_BEHALF_OF_HEADER } from "../common/hops.js";
import type { Logger } from "../common/log.js";
import { MAX_PAGE_SIZE, paginate } from "../common/pagination.js";
import { LOCAL_NODE_ID, parseParent, parseSessionName } from "../common/resource-names.js";
import { parseSessionFilter } from "../common/session-filter.js";
import { BUILT_IN_FILTER_NAMES } from "../node/index.js";
import { forCaller } from "./node-client.js";
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
          // The Node's client relayed the error: the local machine's and the caller's own end stand.
          if (node.local) throw err;
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
    return this.nodeOfName(req.name).sessions.getSession(req, forCaller(ctx));
  }

  /**
   * Creates on the named node with the caller's deadline. A caller that gives up does not undo a
   * create the node has begun: the session then exists (lists show it, a retry gets ALREADY_EXISTS);
   * the node starts nothing once the deadline has passed.
   */
  createSession(req: CreateSessionRequest, ctx: HandlerContext) {
    const node = this.oneNode(req.parent);
    return node.sessions.createSession({ ...req, parent: `nodes/${node.id}` }, forCaller(ctx));
  }

  stopSession(req: StopSessionRequest, ctx: HandlerContext) {
    return this.nodeOfName(req.name).sessions.stopSession(req, forCaller(ctx));
  }

  async listAdoptableSessions(req: ListAdoptableSessionsRequest, ctx: HandlerContext) {
    const nodes = this.nodesOf(parseParent(req.parent));
    const unreachable: string[] = [];
    const lists = await Promise.all(
      nodes.map(async (node) => {
        try {
          const res = await node.sessions.listAdoptableSessions(
            { parent: `nodes/${node.id}` },
            forCaller(ctx, { timeoutMs: listTimeout(node) }),
          );
          return res.adoptableSessions;
        } catch (err) {
          if (node.local) throw err;
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
    return this.nodeOfName(req.name).sessions.adoptSession(req, forCaller(ctx));
  }

  markSessionSeen(req: MarkSessionSeenRequest, ctx: HandlerContext) {
    return this.nodeOfName(req.name).sessions.markSessionSeen(req, forCaller(ctx));
  }

  getChat(req: GetChatRequest, ctx: HandlerContext) {
    return this.nodeOfName(req.name).sessions.getChat(req, forCaller(ctx));
  }

  sendChatMessage(req: SendChatMessageRequest, ctx: HandlerContext) {
    return this.nodeOfName(req.name).sessions.sendChatMessage(req, forCaller(ctx));
  }

  queueChatMessage(req: QueueChatMessageRequest, ctx: HandlerContext) {
    return this.nodeOfName(req.name).sessions.queueChatMessage(req, forCaller(ctx));
  }

  listQueuedMessages(req: ListQueuedMessagesRequest, ctx: HandlerContext) {
    return this.nodeOfName(req.name).sessions.listQueuedMessages(req, forCaller(ctx));
  }

  cancelQueuedMessage(req: CancelQueuedMessageRequest, ctx: HandlerContext) {
    return this.nodeOfName(req.name).sessions.cancelQueuedMessage(req, forCaller(ctx));
  }

  listDirectories(req: ListDirectoriesRequest, ctx: HandlerContext) {
    const node = this.oneNode(req.parent);
    return node.sessions.listDirectories({ ...req, parent: `nodes/${node.id}` }, forCaller(ctx));
  }

  listConversations(req: ListConversationsRequest, ctx: HandlerContext) {
    const node = this.oneNode(req.parent);
    return node.sessions.listConversations({ ...req, parent: `nodes/${node.id}` }, forCaller(ctx));
  }

  createDirectory(req: CreateDirectoryRequest, ctx: HandlerContext) {
    const node = this.oneNode(req.parent);
    return node.sessions.createDirectory({ ...req, parent: `nodes/${node.id}` }, forCaller(ctx));
  }

  /** Forwarded to the owning node, naming this Hub's caller for that node's audit log. */
  answerPrompt(req: AnswerPromptRequest, ctx: HandlerContext) {
    const principal = ctx.values.get(principalKey);
    const caller = `${principal.kind}@${ctx.values.get(peerAddressKey)}`;
    const options = forCaller(ctx);
    return this.nodeOfName(req.name).sessions.answerPrompt(req, {
      ...options,
      headers: withHeader(options.headers, ON_BEHALF_OF_HEADER, caller),
    });
  }

  /** Forwarded to the owning node, which types the CLI's interrupt keys. */
  interruptSession(req: InterruptSessionRequest, ctx: HandlerContext) {
    return this.nodeOfName(req.name).sessions.interruptSession(req, forCaller(ctx));
  }

  /**
   * Merges the watch streams of the nodes of `parent` (`watch-merge.ts`): one SNAPSHOT once every
   * node has answered or failed, then their changes. A node whose stream breaks, or that its health
   * check finds OFFLINE (a hung Node's stream never breaks by itself), is reported at once in
   * `unreachable` (UNREACHABLE_CHANGED) and watched again with backoff, at the latest when its health
   * check sees it back; its fresh snapshot is then sent as changes. A watch of every node takes in
   * the nodes added to the Hub after it started, and one removed takes its sessions out.
   */
  async *watchSessions(req: WatchSessionsRequest, ctx: HandlerContext): AsyncGenerator<WatchSessionsResponse> {
    const parent = parseParent(req.parent);
    const nodes = this.nodesOf(parent);
    const queue = new AsyncQueue<WatchSessionsResponse>();
    const merge = new WatchMerge(
      nodes.map((node) => node.id),
      this.lastKnown,
    );
    const send = (events: WatchSessionsResponse[]) => {
      for (const event of events) queue.push(event);
    };
    /** The node entry each follower watches, by node id. */
    const followed = new Map<string, NodeEntry>();
    const followers: Promise<void>[] = [];
    const startFollowing = (node: NodeEntry) => {
      followed.set(node.id, node);
      followers.push(this.follow(node, merge, send, ctx));
    };
    // Nodes removed from or added to the Hub while the watch runs (a watch of every node only): a
    // removed node's sessions leave at once, an added one (or one added again) is followed.
    const reconcile = () => {
      for (const [id, node] of followed) {
        if (this.registry.isCurrent(node)) continue;
        followed.delete(id);
        // A node changed in place (UpdateNode) keeps its sessions until its new entry's snapshot.
        const replacement = this.registry.list().find((n) => n.id === id);
        if (replacement) startFollowing(replacement);
        else send(merge.nodeRemoved(id));
      }
      if (parent !== "-") return;
      for (const node of this.registry.list()) {
        if (followed.has(node.id) || ctx.signal.aborted) continue;
        send(merge.nodeAdded(node.id));
        startFollowing(node);
      }
    };
    for (const node of nodes) startFollowing(node);
    const cleanup = new Disposables();
    cleanup.add(onAbort(ctx.signal, () => queue.close()));
    cleanup.add(this.registry.onChange(reconcile));
    reconcile();
    send(merge.start());
    try {
      yield* queue;
    } finally {
      cleanup.dispose();
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
      // The watch took its sessions out when the registry dropped it (`reconcile`).
      if (removed()) return;
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
          for await (const event of node.sessions.watchSessions(
            { parent: `nodes/${node.id}` },
            forCaller(ctx, { signal: attempt.signal }),
          )) {
            if (removed()) break;
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
      if (ctx.signal.aborted || removed()) return;
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
    const out: Session[] = [];
    let pageToken = "";
    try {
      do {
        const res = await node.sessions.listSessions(
          { parent: `nodes/${node.id}`, filter, pageSize: MAX_PAGE_SIZE, pageToken },
          forCaller(ctx, { timeoutMs: listTimeout(node) }),
        );
        out.push(...res.sessions);
        pageToken = res.nextPageToken;
      } while (pageToken !== "");
    } catch (err) {
      if (!callerEnd(ctx, err)) this.registry.suspect(node.id);
      throw err;
    }
    return out;
  }

  /** The one node a node-scoped request names (`parent`; empty means the Hub's own machine). */
  private oneNode(parent: string): NodeEntry {
    const id = parent === "" ? LOCAL_NODE_ID : parseParent(parent);
    if (id === "-") throw new ConnectError("parent: name one node (nodes/{node}), not nodes/-", Code.InvalidArgument);
    return this.registry.get(id);
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

/** `headers` (any form CallOptions takes) with one more header. */
function withHeader(headers: CallOptions["headers"], name: string, value: string): Headers {
  const out = new Headers(headers);
  out.set(name, value);
  return out;
}
