import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  ChatMessageSchema,
  ChatMessageSource,
  Cli,
  type Session,
  SessionStatus,
  SessionType,
  StatusReason,
} from "../../../gen/staragent/v1/session_pb.js";
import {
  type GetChatRequest,
  type GetChatResponse,
  GetChatResponseSchema,
  type SendChatMessageRequest,
  type SendChatMessageResponse,
  SendChatMessageResponseSchema,
} from "../../../gen/staragent/v1/session_service_pb.js";
import { sleep } from "../../common/async-queue.js";
import { DEFAULT_HISTORY_LINES, MAX_HISTORY_LINES } from "../../common/history-lines.js";
import { KeyedLock } from "../../common/keyed-lock.js";
import type { Logger } from "../../common/log.js";
import { sessionResourceName } from "../../common/resource-names.js";
import type { AgentModule } from "../agents/agent.js";
import type { ChatHistoryReader, ChatLogRef } from "../agents/chat-history.js";
import type { AgentRegistry } from "../agents/registry.js";
import type { SessionContext, SessionLookup } from "../session-lookup.js";
import type { ChatBackend } from "../session-service.js";
import type { SessionObservation } from "../status/observation.js";
import { type TmuxClient, TmuxError } from "../tmux/client.js";
import { chatDelta, encodeCursor } from "./chat-cursor.js";
import type { ParsedMessage } from "./chat-parser.js";
import { validateChatText } from "./chat-text.js";
import { answerLogChat, answerOlderPage, type LogChatMessage, SCREEN_MERGE_MARGIN } from "./log-chat.js";
import { type ClientCopy, decodeLogCursor, decodePageToken, logGeneration, oldestEntry } from "./log-cursor.js";
import { MessageIds } from "./message-ids.js";
import { pasteMessage } from "./paste-message.js";
import { captureTranscript, MIN_HISTORY_LINES } from "./transcript.js";

/** How long a send waits for the native log to show the new user turn before answering "not confirmed". */
export const CONFIRM_TIMEOUT_MS = 5_000;
/** Pause between re-reads of the native state while waiting for confirmation. */
const CONFIRM_POLL_MS = 100;
/** Sends that may wait behind the one being typed into a session; more are refused, not queued. */
const MAX_QUEUED_SENDS = 8;
/**
 * What a typed message is confirmed against: the native log's newest user turn and queued message
 * before it was typed, and when typing began. A turn or queued message the log dates before then was
 * typed earlier and logged late (Claude Code buffers its writes): it does not confirm this message.
 */
interface Delivery {
  userTurn: string;
  queued: string;
  readonly typedAt: number;
}
/** Messages in a page when the request says 0. */
export const DEFAULT_PAGE_SIZE = 50;
/** Most messages a request may ask for in one page: bounds a response's size and a read's cost. */
export const MAX_PAGE_SIZE = 500;

/** What MachineChat is built from. */
export interface MachineChatOptions {
  /** The machine's sessions, seen through the narrow view chat needs. */
  readonly sessions: SessionLookup;
  readonly tmux: TmuxClient;
  /** The machine's CLIs: each session's chat parser and native-log reader. */
  readonly agents: AgentRegistry;
  readonly log: Logger;
  /**
   * The machine's per-session input lock, shared with AnswerPrompt so a message and an answer never
   * interleave; a lock of its own when not given.
   */
  readonly inputLock?: KeyedLock;
  /** Overrides CONFIRM_TIMEOUT_MS (tests of the unconfirmed path). */
  readonly confirmTimeoutMs?: number;
}

/**
 * Chat over one machine's sessions (docs/chat.md). For a CLI that keeps a native log,
 * GetChat reads the history from the log the session's own process is bound to (the status
 * engine's binding) and adds the screen's live tail; otherwise it parses the active pane's
 * transcript with the parser of the session's CLI. SendChatMessage types a message into the pane
 * and, where the CLI keeps a native log, confirms delivery by the new user turn appearing there.
 */
export class MachineChat implements ChatBackend {
  private readonly ids = new MessageIds();
  private readonly sends: KeyedLock;

  constructor(private readonly options: MachineChatOptions) {
    this.sends = options.inputLock ?? newInputLock();
  }

  async getChat(tmuxName: string, request: GetChatRequest): Promise<GetChatResponse> {
    const historyLines = checkHistoryLines(request.historyLines);
    const pageSize = checkPageSize(request.pageSize);
    if (request.cursor !== "" && request.before !== "") {
      throw new ConnectError(
        "before: pass either cursor (to follow the newest messages) or before (to read older ones), not both",
        Code.InvalidArgument,
      );
    }
    const copy = request.cursor === "" ? undefined : decodeLogCursor(request.cursor);
    const before = request.before === "" ? undefined : decodePageToken(request.before);
    const current = await this.options.sessions.getSession(tmuxName);
    this.refuseSystem(tmuxName, current.type, "has no chat");
    // A session that went outside StarAgent has no pane: its chat is its agent's native log alone.
    const gone = this.options.sessions.sessionContext(tmuxName)
      ? undefined
      : this.options.sessions.goneAgent?.(tmuxName);
    const context = gone ? undefined : this.context(tmuxName);
    // An agent that exited leaves its conversation in its native log: the chat reads on from there
    // (the screen, a shell's or a dead pane's now, is no longer the agent's).
    const past = gone ?? context?.pastAgent;
    const observation = past ?? context?.observation;
    const session = past ? { ...current, cli: past.cli } : current;
    const reader = this.options.agents.historyFor(session.cli);
    const log = boundLog(observation);
    if (before) return this.olderPage(tmuxName, session, reader, log, observation, before, pageSize);
    const lines = context ? await this.capture(tmuxName, context.pane.paneId, historyLines) : [];
    const parsed = past ? [] : this.options.agents.chatParserFor(session.cli).parse(lines);
    const window =
      reader && log
        ? await reader.read(log, {
            limit: Math.max(pageSize, parsed.length + SCREEN_MERGE_MARGIN),
            since: copy ? oldestEntry(copy) : undefined,
          })
        : undefined;
    if (!window) {
      const detail = screenOnlyDetail(this.options.agents.get(session.cli), reader !== undefined, log, observation);
      if (!context) {
        throw new ConnectError(
          `${tmuxName} has ended and its agent's native log cannot be read any more (${detail})`,
          Code.FailedPrecondition,
        );
      }
      return this.screenChat(tmuxName, context.pane.paneId, historyLines, session, parsed, request.cursor, detail);
    }
    // A follower whose copy reaches further back than this read could is brought up to date afresh.
    const usable: ClientCopy | undefined = copy && window.reachedSince ? copy : undefined;
    const answer = answerLogChat(window, parsed, pageSize, usable);
    return create(GetChatResponseSchema, {
      messages: answer.messages.map((entry) => toChatMessage(entry, session.cli)),
      nextCursor: answer.nextCursor,
      reset: answer.reset,
      revision: session.chatRevision,
      cli: session.cli,
      hasMore: answer.hasMore,
      olderPageToken: answer.olderPageToken,
      sourceDetail: `${window.label} (${observation?.chatLogDetail || "bound"})${answer.screenOnly > 0 ? `, and ${answer.screenOnly} message${answer.screenOnly === 1 ? "" : "s"} the log does not hold yet from the screen` : ""}`,
    });
  }

  /** A page of older messages (`before`), read from the session's native log only. */
  private async olderPage(
    tmuxName: string,
    session: Session,
    reader: ChatHistoryReader | undefined,
    log: ChatLogRef | undefined,
    observation: SessionObservation | undefined,
    token: { generation: string; before: number | undefined },
    pageSize: number,
  ): Promise<GetChatResponse> {
    const window = reader && log ? await reader.read(log, { limit: pageSize, before: token.before }) : undefined;
    if (!window) {
      const why = screenOnlyDetail(this.options.agents.get(session.cli), reader !== undefined, log, observation);
      throw new ConnectError(
        `before: ${tmuxName} has no native log to read older messages from now (${why}); read the chat again without before`,
        Code.FailedPrecondition,
      );
    }
    if (logGeneration(window.logKey) !== token.generation) {
      throw new ConnectError(
        `before: ${tmuxName} writes another log than when this page token was made (a new conversation, e.g. after /clear); read the chat again without before`,
        Code.FailedPrecondition,
      );
    }
    const answer = answerOlderPage(window);
    return create(GetChatResponseSchema, {
      messages: answer.messages.map((entry) => toChatMessage(entry, session.cli)),
      nextCursor: "",
      reset: false,
      revision: session.chatRevision,
      cli: session.cli,
      hasMore: answer.hasMore,
      olderPageToken: answer.olderPageToken,
      sourceDetail: `${window.label} (${observation?.chatLogDetail || "bound"})`,
    });
  }

  /** The chat of a program without a readable native log: the screen (and scrollback) alone. */
  private screenChat(
    tmuxName: string,
    paneId: string,
    historyLines: number,
    session: Session,
    parsed: readonly ParsedMessage[],
    cursor: string,
    detail: string,
  ): GetChatResponse {
    const chat = this.ids.number(`${tmuxName}\0${paneId}\0${historyLines}`, parsed);
    const delta = chatDelta(chat, historyLines, cursor);
    return create(GetChatResponseSchema, {
      messages: delta.messages.map(({ id, message }) =>
        create(ChatMessageSchema, {
          id: `${id}`,
          role: message.role,
          text: message.text,
          toolName: message.toolName ?? "",
          toolTarget: message.toolTarget ?? "",
          source: ChatMessageSource.SCREEN,
          cli: session.cli,
        }),
      ),
      nextCursor: encodeCursor(chat, historyLines),
      reset: delta.reset,
      revision: session.chatRevision,
      cli: session.cli,
      hasMore: false,
      olderPageToken: "",
      sourceDetail: detail,
    });
  }

  /**
   * Types a message (SendChatMessage). `blocker`, when given, is asked about the session as read under
   * its send lock, just before typing: a reason refuses the send (FAILED_PRECONDITION, nothing typed).
   * Queued messages use it so that nothing is typed into a turn that began meanwhile.
   */
  async sendChatMessage(
    tmuxName: string,
    request: SendChatMessageRequest,
    signal: AbortSignal,
    blocker?: (session: Session) => string | undefined,
  ): Promise<SendChatMessageResponse> {
    const text = validateChatText(request.text);
    return this.sends.run(tmuxName, async () => {
      const { sessions, log } = this.options;
      // A send that depends on the status (a queued message) looks at tmux and the log as they are now.
      if (blocker) await sessions.sessionContext(tmuxName)?.fresh();
      const session = await sessions.getSession(tmuxName);
      this.refuseSystem(tmuxName, session.type, "does not take chat messages; nothing was typed");
      if (session.ended) {
        const status = session.ended.exitStatus === undefined ? "" : ` with status ${session.ended.exitStatus}`;
        throw new ConnectError(
          `${tmuxName} has ended (its last process exited${status}), so nothing was typed: start a new session, or dismiss this one with StopSession`,
          Code.FailedPrecondition,
        );
      }
      const blocked = blocker?.(session);
      if (blocked !== undefined) {
        throw new ConnectError(`${tmuxName} is not ready: ${blocked}; nothing was typed`, Code.FailedPrecondition);
      }
      if (session.statusReason === StatusReason.PROCESS_EXITED) {
        throw new ConnectError(`the program in ${tmuxName} has exited; nothing was typed`, Code.FailedPrecondition);
      }
      if (session.statusReason === StatusReason.INPUT_PROMPT) {
        throw new ConnectError(
          `${tmuxName} is waiting for an answer${session.prompt ? ` to "${session.prompt}"` : ""}; answer it in the terminal first (a message typed now would answer that prompt). Nothing was typed`,
          Code.FailedPrecondition,
        );
      }
      const context = this.context(tmuxName);
      const { pane } = context;
      // The baseline is the log as it is now, not the last poll's reading of it: a turn whose prompt
      // reached the log after that poll would otherwise confirm this message before it is there.
      const observation = (await context.fresh()) ?? context.observation;
      const before: Delivery = {
        userTurn: observation?.lastUserTurn ?? "",
        queued: observation?.lastQueuedMessage ?? "",
        typedAt: Date.now(),
      };
      const duringTurn = session.status === SessionStatus.WORKING;
      if (signal.aborted) throw new ConnectError("the caller went away; nothing was typed", Code.Canceled);
      try {
        await pasteMessage(this.options.tmux, pane.paneId, text, this.options.agents.get(session.cli)?.submitQuietMs);
      } catch (err) {
        if (err instanceof TmuxError && err.isNotFound) throw this.notFound(tmuxName);
        throw err;
      }
      log.info("chat message typed", { session: tmuxName, bytes: Buffer.byteLength(text) });
      const cliName = this.options.agents.nameOf(session.cli, "cli");
      // hasNativeLog says the CLI keeps one, even before the first prompt creates it: a session with no
      // log yet is confirmed by the log appearing with the new user turn.
      if (observation?.hasNativeLog !== true) {
        return create(SendChatMessageResponseSchema, {
          confirmed: false,
          confirmationDetail: "no native log: typed only",
        });
      }
      const seen = await this.waitForNewUserTurn(context, session.cli, before, signal);
      const confirmed = seen !== undefined;
      log.info(confirmed ? "chat message confirmed" : "chat message not confirmed", { session: tmuxName });
      const seconds = (this.options.confirmTimeoutMs ?? CONFIRM_TIMEOUT_MS) / 1000;
      return create(SendChatMessageResponseSchema, {
        confirmed,
        confirmationDetail: !confirmed
          ? duringTurn
            ? `typed while ${cliName} was working on a turn; its native log showed no new user turn within ${seconds} s (a CLI that holds a message typed during a turn takes it up when that turn ends, and the chat shows it then)`
            : `typed, but the ${cliName} native log showed no new user turn within ${seconds} s`
          : seen === "exited"
            ? `${cliName} exited after it`
            : seen.lastUserTurn !== before.userTurn
              ? seen.lastUserTurnJoined
                ? `${cliName} steered it into the running turn (its native log shows it in that turn)`
                : `${cliName} native log shows the new user turn`
              : `${cliName} queued it behind the running turn (its native log shows it queued); it is taken up when that turn ends`,
      });
    });
  }

  /**
   * Re-reads the native state until its newest user turn, or the newest message it queued, differs
   * from `before` (and returns that observation), or until `cli` no longer runs in the session
   * ("exited": the message was taken, as `/exit` is, and the agent's exit is its answer; its pane is a
   * shell or gone now), or the deadline (undefined).
   */
  private async waitForNewUserTurn(
    context: SessionContext,
    cli: Cli,
    before: Delivery,
    signal: AbortSignal,
  ): Promise<SessionObservation | "exited" | undefined> {
    const deadline = Date.now() + (this.options.confirmTimeoutMs ?? CONFIRM_TIMEOUT_MS);
    for (;;) {
      const observation = await context.fresh();
      // No observation: the session has gone.
      if (!observation || agentExited(observation, cli)) return "exited";
      const turn = observation.lastUserTurn ?? "";
      if (turn !== "" && turn !== before.userTurn) {
        if (!loggedBefore(observation.lastUserTurnAt, before.typedAt)) return observation;
        before.userTurn = turn;
      }
      const queued = observation.lastQueuedMessage ?? "";
      if (queued !== "" && queued !== before.queued) {
        if (!loggedBefore(observation.lastQueuedAt, before.typedAt)) return observation;
        before.queued = queued;
      }
      if (Date.now() >= deadline || signal.aborted) return undefined;
      await sleep(CONFIRM_POLL_MS, signal);
    }
  }

  private refuseSystem(tmuxName: string, type: SessionType, what: string): void {
    if (type !== SessionType.SYSTEM) return;
    throw new ConnectError(
      `${tmuxName} is a StarAgent system session (it runs StarAgent itself) and ${what}; use its terminal instead`,
      Code.FailedPrecondition,
    );
  }

  private context(tmuxName: string): SessionContext {
    const context = this.options.sessions.sessionContext(tmuxName);
    if (!context) throw this.notFound(tmuxName);
    return context;
  }

  private async capture(tmuxName: string, paneId: string, historyLines: number): Promise<string[]> {
    try {
      return await captureTranscript(this.options.tmux, paneId, historyLines);
    } catch (err) {
      if (err instanceof TmuxError && err.isNotFound) throw this.notFound(tmuxName);
      throw err;
    }
  }

  private notFound(tmuxName: string): ConnectError {
    return new ConnectError(
      `session ${sessionResourceName(this.options.sessions.nodeName, tmuxName)} not found`,
      Code.NotFound,
    );
  }
}

/** A per-session input lock for a machine: chat sends and prompt answers are typed one at a time. */
export function newInputLock(): KeyedLock {
  return new KeyedLock(MAX_QUEUED_SENDS);
}

/**
 * True when `cli` no longer runs in the session, as its newest observation shows: its pane is a shell
 * again (a created session's pane returns to a login shell), or the pane's process has exited.
 */
function agentExited(observation: SessionObservation, cli: Cli): boolean {
  return (
    observation.cli !== cli && (observation.cli === Cli.SHELL || observation.reason === StatusReason.PROCESS_EXITED)
  );
}

/** `page_size` as asked (0 means the default); INVALID_ARGUMENT outside the allowed range. */
function checkPageSize(value: number): number {
  if (value === 0) return DEFAULT_PAGE_SIZE;
  if (value < 1 || value > MAX_PAGE_SIZE) {
    throw new ConnectError(
      `page_size: ${value} is out of range; use 1 to ${MAX_PAGE_SIZE} (0 means ${DEFAULT_PAGE_SIZE})`,
      Code.InvalidArgument,
    );
  }
  return value;
}

/** The native log the session's CLI process is bound to, from its newest observation. */
function boundLog(observation: SessionObservation | undefined): ChatLogRef | undefined {
  const path = observation?.chatLogPath ?? "";
  return path === "" ? undefined : { path, session: observation?.chatLogSession ?? "" };
}

/** Why a chat is read off the screen alone, for `source_detail`. */
function screenOnlyDetail(
  module: AgentModule | undefined,
  hasReader: boolean,
  log: ChatLogRef | undefined,
  observation: SessionObservation | undefined,
): string {
  if (!hasReader)
    return module
      ? `the screen and its scrollback (a ${module.name} keeps no log)`
      : "the screen and its scrollback (no native log for this program)";
  if (!log) return `screen only: no native log bound (${observation?.chatLogDetail || "none found"})`;
  return `screen only: its native log ${log.path}${log.session ? ` (session ${log.session})` : ""} cannot be read yet`;
}

/** A message of a log-backed chat; `cli` is the CLI whose log (or screen) it came from: its writer. */
function toChatMessage(entry: LogChatMessage, cli: Cli) {
  return create(ChatMessageSchema, {
    cli,
    id: `${entry.id}`,
    role: entry.message.role,
    text: entry.message.text,
    toolName: entry.message.toolName ?? "",
    toolTarget: entry.message.toolTarget ?? "",
    source: entry.source,
    ...(entry.time ? { createTime: timestampFromDate(entry.time) } : {}),
  });
}

/** `history_lines` as asked (0 means the default); INVALID_ARGUMENT outside the allowed range. */
function checkHistoryLines(value: number): number {
  if (value === 0) return DEFAULT_HISTORY_LINES;
  if (value < MIN_HISTORY_LINES || value > MAX_HISTORY_LINES) {
    throw new ConnectError(
      `history_lines: ${value} is out of range; use ${MIN_HISTORY_LINES} to ${MAX_HISTORY_LINES} (0 means ${DEFAULT_HISTORY_LINES})`,
      Code.InvalidArgument,
    );
  }
  return value;
}

/** True when the log dates a record (`at`, 0 when it gives no time) before typing began. */
function loggedBefore(at: number | undefined, typedAt: number): boolean {
  return at !== undefined && at > 0 && at < typedAt;
}
