import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { type Session, SessionType, StatusReason } from "../../../gen/staragent/v1/session_pb.js";
import {
  SendChatMessageRequestSchema,
  type WatchSessionsResponse,
} from "../../../gen/staragent/v1/session_service_pb.js";
import type { Logger } from "../../common/log.js";
import { validateChatText } from "./chat-text.js";
import type { MachineChat } from "./machine-chat.js";
import { MessageQueue, type QueuedEntry, type SessionKey, sessionKey, toQueuedMessage } from "./message-queue.js";
import { QueueDelivery } from "./queue-delivery.js";

/** What QueuedChat is built from. */
export interface QueuedChatOptions {
  /** `$STARAGENT_HOME`: the queue file lives there. */
  readonly home: string;
  /** One session by tmux name (NOT_FOUND when tmux has none). */
  readonly getSession: (tmuxName: string) => Promise<Session>;
  /** The machine's watch stream. */
  readonly watch: (signal: AbortSignal) => AsyncIterable<WatchSessionsResponse>;
  /** Types messages, as SendChatMessage does. */
  readonly chat: MachineChat;
  /** The queue's counts changed: the session model must be read again. */
  readonly changed: () => void;
  readonly log: Logger;
}

/**
 * Queued chat messages of one machine (QueueChatMessage, ListQueuedMessages, CancelQueuedMessage): the
 * requests' checks over the queue file, and the delivery that types them when sessions are ready.
 */
export class QueuedChat {
  private readonly queue: MessageQueue;
  private readonly delivery: QueueDelivery;

  constructor(private readonly options: QueuedChatOptions) {
    this.queue = new MessageQueue(options.home, options.log);
    this.delivery = new QueueDelivery({
      queue: this.queue,
      watch: options.watch,
      send: (tmuxName, text, blocker) =>
        options.chat.sendChatMessage(
          tmuxName,
          create(SendChatMessageRequestSchema, { text }),
          AbortSignal.timeout(60_000),
          blocker,
        ),
      changed: options.changed,
      log: options.log,
    });
  }

  /** Reads the queue file and types what waits (after a restart) once sessions are ready. */
  start(): Promise<void> {
    return this.delivery.start();
  }

  /** Messages of a session not typed yet, for `Session.queued_messages` (0 before the file is read). */
  count(key: SessionKey): number {
    return this.queue.count(key);
  }

  /** QueueChatMessage. */
  async add(tmuxName: string, text: string) {
    const checked = validateChatText(text);
    const session = await this.options.getSession(tmuxName);
    if (session.type === SessionType.SYSTEM) {
      throw new ConnectError(
        `${tmuxName} is a StarAgent system session and does not take chat messages; nothing was queued`,
        Code.FailedPrecondition,
      );
    }
    if (session.statusReason === StatusReason.PROCESS_EXITED) {
      throw new ConnectError(`the program in ${tmuxName} has exited; nothing was queued`, Code.FailedPrecondition);
    }
    const entry = await this.queue.add(sessionKey(session), checked);
    this.options.log.info("chat message queued", { session: tmuxName, id: entry.id });
    this.delivery.queued();
    return toQueuedMessage(entry);
  }

  /** ListQueuedMessages. */
  async list(tmuxName: string) {
    const session = await this.options.getSession(tmuxName);
    return (await this.queue.list(sessionKey(session))).map((e: QueuedEntry) => toQueuedMessage(e));
  }

  /** CancelQueuedMessage. */
  async cancel(tmuxName: string, id: string): Promise<void> {
    if (id === "") throw new ConnectError("id: name the queued message to cancel", Code.InvalidArgument);
    const session = await this.options.getSession(tmuxName);
    await this.queue.cancel(sessionKey(session), id);
    this.options.changed();
  }

  /** Stops delivering (a message being typed finishes). */
  close(): void {
    this.delivery.close();
  }
}
