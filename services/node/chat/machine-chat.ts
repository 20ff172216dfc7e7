import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ChatMessageSchema, Cli, SessionType, StatusReason } from "../../../gen/staragent/v1/session_pb.js";
import {
  type GetChatRequest,
  type GetChatResponse,
  GetChatResponseSchema,
  type SendChatMessageRequest,
  type SendChatMessageResponse,
  SendChatMessageResponseSchema,
} from "../../../gen/staragent/v1/session_service_pb.js";
import { sleep } from "../../common/async-queue.js";
import type { Logger } from "../../common/log.js";
import type { Machine } from "../machine.js";
import type { ChatBackend } from "../session-service.js";
import { type TmuxClient, TmuxError } from "../tmux/client.js";
import { sessionResourceName } from "../tmux/names.js";
import { chatDelta, encodeCursor } from "./chat-cursor.js";
import { validateChatText } from "./chat-text.js";
import { KeyedLock } from "./keyed-lock.js";
import { MessageIds } from "./message-ids.js";
import { chatParserFor } from "./parser-registry.js";
import { pasteMessage } from "./paste-message.js";
import { captureTranscript, DEFAULT_HISTORY_LINES, MAX_HISTORY_LINES, MIN_HISTORY_LINES } from "./transcript.js";

/** How long a send waits for the native log to show the new user turn before answering "not confirmed". */
export const CONFIRM_TIMEOUT_MS = 5_000;
/** Pause between re-reads of the native state while waiting for confirmation. */
const CONFIRM_POLL_MS = 100;
/** Sends that may wait behind the one being typed into a session; more are refused, not queued. */
const MAX_QUEUED_SENDS = 8;

/** What MachineChat is built from. */
export interface MachineChatOptions {
  readonly machine: Machine;
  readonly tmux: TmuxClient;
  readonly log: Logger;
  /** Overrides CONFIRM_TIMEOUT_MS (tests of the unconfirmed path). */
  readonly confirmTimeoutMs?: number;
}

/**
 * Chat over one machine's sessions (DESIGN.md §7): GetChat parses the active pane's transcript with
 * the parser of the session's CLI; SendChatMessage types a message into it and, where the CLI keeps
 * a native log, confirms delivery by the new user turn appearing there.
 */
export class MachineChat implements ChatBackend {
  private readonly ids = new MessageIds();
  private readonly sends = new KeyedLock(MAX_QUEUED_SENDS);

  constructor(private readonly options: MachineChatOptions) {}

  async getChat(tmuxName: string, request: GetChatRequest): Promise<GetChatResponse> {
    const historyLines = checkHistoryLines(request.historyLines);
    const session = await this.options.machine.getSession(tmuxName);
    this.refuseSystem(tmuxName, session.type, "has no chat");
    const pane = this.pane(tmuxName);
    const lines = await this.capture(tmuxName, pane.paneId, historyLines);
    const parsed = chatParserFor(session.cli).parse(lines);
    const chat = this.ids.number(`${tmuxName}\0${pane.paneId}\0${historyLines}`, parsed);
    const delta = chatDelta(chat, historyLines, request.cursor);
    return create(GetChatResponseSchema, {
      messages: delta.messages.map(({ id, message }) =>
        create(ChatMessageSchema, {
          id: `${id}`,
          role: message.role,
          text: message.text,
          toolName: message.toolName ?? "",
          toolTarget: message.toolTarget ?? "",
        }),
      ),
      nextCursor: encodeCursor(chat, historyLines),
      reset: delta.reset,
      revision: session.chatRevision,
      cli: session.cli,
    });
  }

  async sendChatMessage(
    tmuxName: string,
    request: SendChatMessageRequest,
    signal: AbortSignal,
  ): Promise<SendChatMessageResponse> {
    const text = validateChatText(request.text);
    return this.sends.run(tmuxName, async () => {
      const { machine, log } = this.options;
      const session = await machine.getSession(tmuxName);
      this.refuseSystem(tmuxName, session.type, "does not take chat messages; nothing was typed");
      if (session.statusReason === StatusReason.PROCESS_EXITED) {
        throw new ConnectError(`the program in ${tmuxName} has exited; nothing was typed`, Code.FailedPrecondition);
      }
      if (session.statusReason === StatusReason.INPUT_PROMPT) {
        throw new ConnectError(
          `${tmuxName} is waiting for an answer${session.prompt ? ` to "${session.prompt}"` : ""}; answer it in the terminal first (a message typed now would answer that prompt). Nothing was typed`,
          Code.FailedPrecondition,
        );
      }
      const pane = this.pane(tmuxName);
      const observation = machine.lastObservations.get(tmuxName);
      const before = observation?.lastUserTurn ?? "";
      if (signal.aborted) throw new ConnectError("the caller went away; nothing was typed", Code.Canceled);
      try {
        await pasteMessage(this.options.tmux, pane.paneId, text);
      } catch (err) {
        if (err instanceof TmuxError && err.isNotFound) throw this.notFound(tmuxName);
        throw err;
      }
      log.info("chat message typed", { session: tmuxName, bytes: Buffer.byteLength(text) });
      const cliName = (Cli[session.cli] ?? "cli").toLowerCase();
      // hasNativeLog says the CLI keeps one, even before the first prompt creates it: a session with no
      // log yet is confirmed by the log appearing with the new user turn.
      if (observation?.hasNativeLog !== true) {
        return create(SendChatMessageResponseSchema, {
          confirmed: false,
          confirmationDetail: "no native log: typed only",
        });
      }
      const confirmed = await this.waitForNewUserTurn(tmuxName, before, signal);
      log.info(confirmed ? "chat message confirmed" : "chat message not confirmed", { session: tmuxName });
      const seconds = (this.options.confirmTimeoutMs ?? CONFIRM_TIMEOUT_MS) / 1000;
      return create(SendChatMessageResponseSchema, {
        confirmed,
        confirmationDetail: confirmed
          ? `${cliName} native log shows the new user turn`
          : `typed, but the ${cliName} native log showed no new user turn within ${seconds} s`,
      });
    });
  }

  /** Re-reads the native state until its newest user turn differs from `before`, or the deadline. */
  private async waitForNewUserTurn(tmuxName: string, before: string, signal: AbortSignal): Promise<boolean> {
    const deadline = Date.now() + (this.options.confirmTimeoutMs ?? CONFIRM_TIMEOUT_MS);
    for (;;) {
      await this.options.machine.refresh();
      const now = this.options.machine.lastObservations.get(tmuxName)?.lastUserTurn ?? "";
      if (now !== "" && now !== before) return true;
      if (Date.now() >= deadline || signal.aborted) return false;
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

  private pane(tmuxName: string) {
    const pane = this.options.machine.lastPanes.get(tmuxName);
    if (!pane) throw this.notFound(tmuxName);
    return pane;
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
      `session ${sessionResourceName(this.options.machine.nodeName, tmuxName)} not found`,
      Code.NotFound,
    );
  }
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
