import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import {
  type GetChatRequest,
  type GetChatResponse,
  type SendChatMessageRequest,
  type SendChatMessageResponse,
  type SessionService,
  WatchSessionsResponseSchema,
} from "../../gen/staragent/v1/session_service_pb.js";
import { paginate } from "../common/pagination.js";
import { parseParent, parseSessionName } from "../common/resource-names.js";
import { parseSessionFilter } from "../common/session-filter.js";
import type { Machine } from "./machine.js";

/** Chat over a machine's sessions (DESIGN.md §7); provided by the chat module. */
export interface ChatBackend {
  getChat(tmuxName: string, request: GetChatRequest, signal: AbortSignal): Promise<GetChatResponse>;
  sendChatMessage(
    tmuxName: string,
    request: SendChatMessageRequest,
    signal: AbortSignal,
  ): Promise<SendChatMessageResponse>;
}

/**
 * `SessionService` over one machine: what a Node serves, and what the Hub calls for its own machine.
 * Resource names must name this machine's node (or `-` where a parent may).
 */
export class MachineSessionService implements ServiceImpl<typeof SessionService> {
  constructor(
    private readonly machine: Machine,
    private readonly chat?: ChatBackend,
  ) {}

  async listSessions(req: { parent: string; filter: string; pageSize: number; pageToken: string }) {
    this.checkParent(req.parent);
    const filter = parseSessionFilter(req.filter, this.machine.agents.filterNames);
    const sessions = (await this.machine.listSessions()).filter(filter);
    const { page, nextPageToken } = paginate(
      sessions,
      (s) => s.tmuxSession,
      req.pageSize,
      req.pageToken,
      `${req.filter}`,
    );
    return { sessions: page, nextPageToken, unreachable: [] };
  }

  async getSession(req: { name: string }) {
    return { session: await this.machine.getSession(this.tmuxName(req.name)) };
  }

  /**
   * Creates a session, unless the caller is already gone (its deadline, passed on by a Hub, ran out
   * on the way): then nothing is started. Once tmux has started the session it stays, even if the
   * caller gives up meanwhile: it is listed, and a retry gets ALREADY_EXISTS.
   */
  async createSession(req: { parent: string; sessionId: string; cwd: string; command: string[] }, ctx: HandlerContext) {
    if (req.parent !== "") this.checkParent(req.parent, false);
    if (ctx.signal.aborted) {
      throw new ConnectError(
        "the caller went away (or its deadline passed); nothing was created",
        Code.DeadlineExceeded,
      );
    }
    const session = await this.machine.createSession({ sessionId: req.sessionId, cwd: req.cwd, command: req.command });
    return { session };
  }

  async stopSession(req: { name: string; force: boolean }) {
    await this.machine.stopSession(this.tmuxName(req.name), req.force);
    return {};
  }

  async listAdoptableSessions(req: { parent: string }) {
    this.checkParent(req.parent);
    return { adoptableSessions: await this.machine.listAdoptable(), unreachable: [] };
  }

  async adoptSession(req: { name: string }) {
    return { session: await this.machine.adoptSession(this.tmuxName(req.name)) };
  }

  async markSessionSeen(req: { name: string; completionId: string }) {
    return { session: await this.machine.markSeen(this.tmuxName(req.name), req.completionId) };
  }

  async getChat(req: GetChatRequest, ctx: HandlerContext) {
    const name = this.tmuxName(req.name);
    if (!this.chat) throw new ConnectError("chat is not available on this node", Code.Unimplemented);
    return this.chat.getChat(name, req, ctx.signal);
  }

  async sendChatMessage(req: SendChatMessageRequest, ctx: HandlerContext) {
    const name = this.tmuxName(req.name);
    if (!this.chat) throw new ConnectError("chat is not available on this node", Code.Unimplemented);
    return this.chat.sendChatMessage(name, req, ctx.signal);
  }

  async *watchSessions(req: { parent: string }, ctx: HandlerContext) {
    this.checkParent(req.parent);
    for await (const event of this.machine.watch(ctx.signal)) {
      yield create(WatchSessionsResponseSchema, event);
    }
  }

  /** The tmux name from a resource name that must be on this machine. */
  private tmuxName(name: string): string {
    const parsed = parseSessionName(name);
    if (parsed.node !== this.machine.nodeName) {
      throw new ConnectError(
        `node ${parsed.node} is not served here (this is node ${this.machine.nodeName})`,
        Code.NotFound,
      );
    }
    return parsed.session;
  }

  private checkParent(parent: string, allowAll = true): void {
    const node = parseParent(parent);
    if ((node === "-" && allowAll) || node === this.machine.nodeName) return;
    if (node === "-") throw new ConnectError("parent: name one node (nodes/{node}), not nodes/-", Code.InvalidArgument);
    throw new ConnectError(`node ${node} is not served here (this is node ${this.machine.nodeName})`, Code.NotFound);
  }
}
