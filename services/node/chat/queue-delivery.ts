import { Code, ConnectError } from "@connectrpc/connect";
import { type Session, SessionStatus, SessionType, StatusReason } from "../../../gen/staragent/v1/session_pb.js";
import { WatchEventType, type WatchSessionsResponse } from "../../../gen/staragent/v1/session_service_pb.js";
import type { Logger } from "../../common/log.js";
import { type MessageQueue, type SessionKey, sessionKey } from "./message-queue.js";

/**
 * Whether a queued message may be typed into the session now: it is an agent session that is idle, or
 * in review for a finished turn. Never while a prompt is on screen, a turn or command runs, or the
 * program has exited; undefined when it may, else why not (for the log and the refusal).
 */
export function queueBlocker(session: Session): string | undefined {
  if (session.type !== SessionType.AGENT) return "it is a system session";
  if (session.status === SessionStatus.REVIEW) {
    return session.statusReason === StatusReason.UNSEEN_COMPLETION ? undefined : "a prompt is waiting for an answer";
  }
  if (session.status !== SessionStatus.IDLE) return "a turn is running";
  switch (session.statusReason) {
    case StatusReason.NO_TURN:
    case StatusReason.SEEN_COMPLETION:
    case StatusReason.INTERRUPTED:
    case StatusReason.SHELL_PROMPT:
      return undefined;
    case StatusReason.PROCESS_EXITED:
      return "its program has exited";
    default:
      return "its state is not known";
  }
}

/** What QueueDelivery works with. */
export interface QueueDeliveryOptions {
  readonly queue: MessageQueue;
  /** The machine's watch stream (a snapshot, then changes): delivery follows the status engine's events. */
  readonly watch: (signal: AbortSignal) => AsyncIterable<WatchSessionsResponse>;
  /**
   * Types a message exactly as SendChatMessage does, refusing (FAILED_PRECONDITION, nothing typed) when
   * `blocker` finds a reason in the session as read under the session's send lock.
   */
  readonly send: (tmuxName: string, text: string, blocker: (s: Session) => string | undefined) => Promise<unknown>;
  /** The queue's counts changed: the session model must be read again. */
  readonly changed: () => void;
  readonly log: Logger;
}

const keyText = (key: SessionKey) => `${key.tmuxSession}\0${key.sessionCreated}`;

/**
 * Types queued messages (QueueChatMessage) into their sessions, one per turn: the first moment a session
 * with waiting messages is idle or in review for a finished turn (queueBlocker), its oldest message is
 * marked `typing` in the queue file, typed like a chat send, then removed. The next one waits until the
 * session has been seen busy again (or its newest turn changed), so two messages never go into one
 * turn. It watches the machine only while messages wait, so an idle machine's watch loop still sleeps.
 */
export class QueueDelivery {
  /** The sessions as the current watch has them (empty while none runs). */
  private readonly sessions = new Map<string, Session>();
  /** Sessions typed into, with the completion id then: nothing more until they have been busy since. */
  private readonly awaitingTurn = new Map<string, string>();
  private readonly typing = new Set<string>();
  private watching: AbortController | undefined;
  private closed = false;

  constructor(private readonly options: QueueDeliveryOptions) {}

  /** Opens the queue and starts watching when messages wait (after a restart). */
  async start(): Promise<void> {
    await this.options.queue.open();
    this.ensureWatching();
  }

  /** A message was queued: watch (and type it now if the session is ready). */
  queued(): void {
    this.options.changed();
    this.ensureWatching();
    for (const key of this.options.queue.waitingSessions()) this.consider(key);
  }

  /** Stops watching; a message being typed finishes. */
  close(): void {
    this.closed = true;
    this.watching?.abort();
  }

  private ensureWatching(): void {
    if (this.closed || this.watching || this.options.queue.waitingSessions().length === 0) return;
    const controller = new AbortController();
    this.watching = controller;
    void this.follow(controller).finally(() => {
      if (this.watching === controller) this.watching = undefined;
      // Messages queued while the stream was ending (or a stream that broke) start a new one.
      if (!controller.signal.aborted) setTimeout(() => this.ensureWatching(), 1_000).unref();
    });
  }

  private async follow(controller: AbortController): Promise<void> {
    // What an earlier watch said is stale once it ended (a session may have started a turn since):
    // nothing is typed on it, only on this watch's snapshot and changes.
    this.sessions.clear();
    try {
      for await (const event of this.options.watch(controller.signal)) {
        this.apply(event);
        const waiting = this.options.queue.waitingSessions();
        if (waiting.length === 0 && this.typing.size === 0) {
          controller.abort();
          return;
        }
        for (const key of waiting) this.consider(key);
      }
    } catch (err) {
      if (!controller.signal.aborted) this.options.log.warn("queued messages: watch failed", { error: `${err}` });
    }
  }

  private apply(event: WatchSessionsResponse): void {
    if (event.type === WatchEventType.SNAPSHOT) {
      this.sessions.clear();
      for (const s of event.sessions) this.sessions.set(s.tmuxSession, s);
      const live = event.sessions.map(sessionKey);
      // Messages of sessions tmux no longer has can never be typed.
      void this.options.queue
        .forgetExcept(live)
        .then(() => this.options.changed())
        .catch(() => undefined);
    } else if (event.type === WatchEventType.UPSERTED) {
      for (const s of event.sessions) this.sessions.set(s.tmuxSession, s);
    } else if (event.type === WatchEventType.REMOVED) {
      for (const name of event.removedNames) {
        const tmux = name.slice(name.lastIndexOf("/") + 1);
        this.sessions.delete(tmux);
      }
    }
    for (const [name, completion] of this.awaitingTurn) {
      const s = this.sessions.get(name);
      if (!s || queueBlocker(s) !== undefined || s.completionId !== completion) this.awaitingTurn.delete(name);
    }
  }

  private consider(key: SessionKey): void {
    const session = this.sessions.get(key.tmuxSession);
    if (!session || keyText(sessionKey(session)) !== keyText(key)) return;
    if (this.typing.has(key.tmuxSession) || this.awaitingTurn.has(key.tmuxSession)) return;
    if (queueBlocker(session) !== undefined) return;
    this.typing.add(key.tmuxSession);
    void this.deliver(key, session).finally(() => {
      this.typing.delete(key.tmuxSession);
      this.options.changed();
    });
  }

  private async deliver(key: SessionKey, session: Session): Promise<void> {
    const { queue, log } = this.options;
    const entry = await queue.takeNext(key).catch((err: unknown) => {
      log.warn("queued messages: cannot mark a message before typing it; not typed", { error: `${err}` });
      return undefined;
    });
    if (!entry) return;
    this.options.changed();
    try {
      await this.options.send(key.tmuxSession, entry.text, queueBlocker);
      this.awaitingTurn.set(key.tmuxSession, session.completionId);
      await queue.done(entry.id);
      log.info("queued message typed", { session: key.tmuxSession, id: entry.id });
    } catch (err) {
      const code = err instanceof ConnectError ? err.code : undefined;
      if (code === Code.FailedPrecondition || code === Code.ResourceExhausted) {
        // Refused before a key went out (a prompt appeared, a turn began): it waits for the next chance.
        await queue.putBack(entry.id).catch(() => undefined);
        log.info("queued message not typed yet", { session: key.tmuxSession, reason: `${err}` });
      } else if (code === Code.NotFound) {
        await queue.done(entry.id).catch(() => undefined);
      } else {
        // Typing may have begun: never again by itself.
        await queue.markUnsure(entry.id).catch(() => undefined);
        log.warn("queued message may not have been typed whole; kept as uncertain", {
          session: key.tmuxSession,
          error: `${err}`,
        });
      }
    }
  }
}
