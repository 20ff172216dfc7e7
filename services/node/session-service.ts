import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import type { Cli } from "../../gen/staragent/v1/session_pb.js";
import {
  type AnswerPromptRequest,
  type GetChatRequest,
  type GetChatResponse,
  type InterruptSessionRequest,
  type QueuedMessage,
  type SendChatMessageRequest,
  type SendChatMessageResponse,
  type SessionService,
  WatchSessionsResponseSchema,
} from "../../gen/staragent/v1/session_service_pb.js";
import { peerAddressKey, principalKey } from "../common/context-keys.js";
import { ON_BEHALF_OF_HEADER } from "../common/hops.js";
import { paginate } from "../common/pagination.js";
import { parseParent, parseSessionName } from "../common/resource-names.js";
import { parseSessionFilter } from "../common/session-filter.js";
import type { Directories } from "./directories.js";
import type { Machine } from "./machine.js";
import type { PastConversations } from "./past-conversations.js";
import type { MachinePrompts, PromptCaller } from "./prompts/machine-prompts.js";

/** Chat over a machine's sessions (docs/chat.md); provided by the chat module. */
export interface ChatBackend {
  getChat(tmuxName: string, request: GetChatRequest, signal: AbortSignal): Promise<GetChatResponse>;
  sendChatMessage(
    tmuxName: string,
    request: SendChatMessageRequest,
    signal: AbortSignal,
  ): Promise<SendChatMessageResponse>;
}

/** Queued chat messages over a machine's sessions (QueueChatMessage and its kin); provided by chat/queued-chat.ts. */
export interface QueuedChatBackend {
  add(tmuxName: string, text: string): Promise<QueuedMessage>;
  list(tmuxName: string): Promise<QueuedMessage[]>;
  cancel(tmuxName: string, id: string): Promise<void>;
}

/**
 * `SessionService` over one machine: what a Node serves, and what the Hub calls for its own machine.
 * Resource names must name this machine's node (or `-` where a parent may).
 */
export class MachineSessionService implements ServiceImpl<typeof SessionService> {
  constructor(
    private readonly machine: Machine,
    private readonly chat?: ChatBackend,
    private readonly prompts?: MachinePrompts,
    private readonly starting?: {
      readonly queued: QueuedChatBackend;
      readonly directories: Directories;
      readonly conversations: PastConversations;
    },
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
  async createSession(
    req: {
      parent: string;
      sessionId: string;
      cwd: string;
      command: string[];
      worktree?: { branch: string; baseRef: string; path: string };
      resume?: { cli: Cli; conversationId: string };
    },
    ctx: HandlerContext,
  ) {
    if (req.parent !== "") this.checkParent(req.parent, false);
    if (ctx.signal.aborted) {
      throw new ConnectError(
        "the caller went away (or its deadline passed); nothing was created",
        Code.DeadlineExceeded,
      );
    }
    const command = req.resume
      ? await this.need().conversations.resumeCommand(req.resume.cli, req.resume.conversationId, req.command)
      : req.command;
    const session = await this.machine.createSession({
      sessionId: req.sessionId,
      cwd: req.cwd,
      command,
      ...(req.worktree ? { worktree: req.worktree } : {}),
    });
    return { session };
  }

  async stopSession(req: { name: string; force: boolean; removeWorktree: boolean }) {
    await this.machine.stopSession(this.tmuxName(req.name), req.force, req.removeWorktree);
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

  async queueChatMessage(req: { name: string; text: string }) {
    return { message: await this.need().queued.add(this.tmuxName(req.name), req.text) };
  }

  async listQueuedMessages(req: { name: string }) {
    return { messages: await this.need().queued.list(this.tmuxName(req.name)) };
  }

  async cancelQueuedMessage(req: { name: string; id: string }) {
    await this.need().queued.cancel(this.tmuxName(req.name), req.id);
    return {};
  }

  async listDirectories(req: {
    parent: string;
    path: string;
    pageSize: number;
    pageToken: string;
    showHidden: boolean;
  }) {
    if (req.parent !== "") this.checkParent(req.parent, false);
    return this.need().directories.list(req.path, req.pageSize, req.pageToken, req.showHidden);
  }

  async createDirectory(req: { parent: string; path: string }) {
    if (req.parent !== "") this.checkParent(req.parent, false);
    return { directory: await this.need().directories.create(req.path) };
  }

  async listConversations(req: { parent: string; cwd: string; cli: Cli; pageSize: number; pageToken: string }) {
    if (req.parent !== "") this.checkParent(req.parent, false);
    return this.need().conversations.list(req.cwd, req.cli, req.pageSize, req.pageToken);
  }

  async answerPrompt(req: AnswerPromptRequest, ctx: HandlerContext) {
    const name = this.tmuxName(req.name);
    if (!this.prompts) throw new ConnectError("answering prompts is not available on this node", Code.Unimplemented);
    return this.prompts.answerPrompt(name, req, promptCaller(ctx), ctx.signal);
  }

  async interruptSession(req: InterruptSessionRequest, ctx: HandlerContext) {
    const name = this.tmuxName(req.name);
    if (!this.prompts) throw new ConnectError("interrupting is not available on this node", Code.Unimplemented);
    return this.prompts.interruptSession(name, ctx.signal);
  }

  async *watchSessions(req: { parent: string }, ctx: HandlerContext) {
    this.checkParent(req.parent);
    for await (const event of this.machine.watch(ctx.signal)) {
      yield create(WatchSessionsResponseSchema, event);
    }
  }

  private need() {
    if (!this.starting)
      throw new ConnectError("queued messages and folders are not available on this node", Code.Unimplemented);
    return this.starting;
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

/**
 * Who is answering, for the audit log: the token kind and peer address. A Hub names its own caller in
 * ON_BEHALF_OF_HEADER (`user@address`) on the calls it forwards: trusted from a node token (a Hub
 * calling this Node) and from the Hub's in-process call to its own machine (no token: nothing from
 * the network reaches a handler without one), never from a user token.
 */
function promptCaller(ctx: HandlerContext): PromptCaller {
  const principal = ctx.values.get(principalKey);
  const peer = ctx.values.get(peerAddressKey);
  const behalf = principal.kind === "user" ? "" : (ctx.requestHeader.get(ON_BEHALF_OF_HEADER) ?? "").slice(0, 200);
  if (behalf === "") return { tokenKind: principal.kind, from: peer };
  const at = behalf.indexOf("@");
  const via = principal.kind === "node" ? `through the Hub at ${peer}` : "through this machine's Hub";
  return {
    tokenKind: at > 0 ? behalf.slice(0, at) : "unknown",
    from: `${at > 0 ? behalf.slice(at + 1) : behalf} ${via}`,
  };
}
