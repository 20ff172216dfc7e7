import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import * as v from "valibot";
import type { Session } from "../../../gen/staragent/v1/session_pb.js";
import { type QueuedMessage, QueuedMessageSchema } from "../../../gen/staragent/v1/session_service_pb.js";
import { sleep } from "../../common/async-queue.js";
import { JsonFile, schemaValidator } from "../../common/json-file.js";
import type { Logger } from "../../common/log.js";

/** Messages one session may have waiting: a queue is a few next instructions, not a script to replay. */
export const MAX_QUEUED_PER_SESSION = 20;
/** Sessions with waiting messages on one machine; bounds the file and every read of it. */
const MAX_QUEUED_SESSIONS = 500;
/** Version stamped into the file so later releases can migrate it. */
const QUEUE_FILE_VERSION = 1;
/**
 * How long CancelQueuedMessage waits on a message being typed: the delivery marks it before the
 * session's send lock checks the session, and a check that finds the session busy puts it back at once.
 */
export const CANCEL_WAIT_MS = 3_000;
/** How often the wait looks whether the typing ended. */
const CANCEL_POLL_MS = 20;

/**
 * Where a queued message is: `queued` (waiting), `typing` (marked just before it is typed; it is never
 * typed again), `unsure` (it was `typing` when the machine stopped, so it may or may not have arrived:
 * it stays listed for a person to check and is never typed by itself).
 */
export type QueuedState = "queued" | "typing" | "unsure";

/** One queued message as the file keeps it. */
const QueuedEntrySchema = v.object({
  id: v.string(),
  /** tmux session name. */
  tmuxSession: v.string(),
  /** tmux `session_created` (seconds): a later session reusing the name does not inherit the queue. */
  sessionCreated: v.number(),
  text: v.string(),
  /** ISO 8601. */
  createTime: v.fallback(v.string(), ""),
  state: v.fallback(v.picklist(["queued", "typing", "unsure"]), "queued"),
});

/** One queued message as the file keeps it. */
export type QueuedEntry = v.InferOutput<typeof QueuedEntrySchema>;

/** `.staragent/queued_messages.json`, read at any version and stamped with this one. */
const QueueFileSchema = v.pipe(
  v.object({ messages: v.array(QueuedEntrySchema) }),
  v.transform(({ messages }) => ({ version: QUEUE_FILE_VERSION, messages })),
);
type QueueFile = v.InferOutput<typeof QueueFileSchema>;

/** Identifies one tmux session across a reuse of its name. */
export interface SessionKey {
  readonly tmuxSession: string;
  readonly sessionCreated: number;
}

/** The queue's key of a session: its tmux name and creation time. */
export function sessionKey(session: Session): SessionKey {
  return { tmuxSession: session.tmuxSession, sessionCreated: Number(session.createTime?.seconds ?? 0n) };
}

const sameSession = (e: QueuedEntry, key: SessionKey) =>
  e.tmuxSession === key.tmuxSession && e.sessionCreated === key.sessionCreated;

/**
 * The machine's queued chat messages (QueueChatMessage), kept in `$STARAGENT_HOME/queued_messages.json`
 * so they survive a restart. A message is marked `typing` in the file before a single key is typed and
 * removed once typed, so it is typed at most once: one still marked `typing` when the file is opened
 * was being typed when the machine stopped, and becomes `unsure` (listed, never typed again by itself).
 * Counts are cached in memory for the session model, which asks on every read.
 */
export class MessageQueue {
  private readonly file: JsonFile<QueueFile>;
  private entries: QueuedEntry[] | undefined;
  private opened: Promise<void> | undefined;
  /** Ids a CancelQueuedMessage is waiting to remove: never handed out for typing meanwhile. */
  private readonly cancelling = new Set<string>();

  constructor(home: string, log: Logger) {
    this.file = new JsonFile(
      join(home, "queued_messages.json"),
      schemaValidator(QueueFileSchema, "queued_messages.json"),
      () => ({ version: QUEUE_FILE_VERSION, messages: [] }),
      log,
    );
  }

  /** Reads the file once; a message left `typing` by a stop becomes `unsure`. */
  open(): Promise<void> {
    this.opened ??= (async () => {
      const file = await this.file.read();
      if (file.messages.some((m) => m.state === "typing")) {
        await this.update((messages) =>
          messages.map((m) => (m.state === "typing" ? { ...m, state: "unsure" as const } : m)),
        ).catch(() => undefined);
      }
      this.entries ??= file.messages.map((m) => (m.state === "typing" ? { ...m, state: "unsure" } : m));
    })();
    return this.opened;
  }

  /** Sessions that have messages waiting to be typed (state `queued`). */
  waitingSessions(): SessionKey[] {
    const keys = new Map<string, SessionKey>();
    for (const m of this.entries ?? []) {
      if (m.state === "queued") keys.set(`${m.tmuxSession}\0${m.sessionCreated}`, m);
    }
    return [...keys.values()];
  }

  /** How many messages of a session are not typed yet (queued, typing or unsure), for `Session.queued_messages`. */
  count(key: SessionKey): number {
    let n = 0;
    for (const m of this.entries ?? []) if (sameSession(m, key)) n++;
    return n;
  }

  /** The session's messages not typed yet, oldest first. */
  async list(key: SessionKey): Promise<QueuedEntry[]> {
    await this.open();
    return (this.entries ?? []).filter((m) => sameSession(m, key));
  }

  /** Adds a message; RESOURCE_EXHAUSTED past MAX_QUEUED_PER_SESSION or MAX_QUEUED_SESSIONS. */
  async add(key: SessionKey, text: string, now = new Date()): Promise<QueuedEntry> {
    await this.open();
    const entry: QueuedEntry = {
      id: randomUUID(),
      tmuxSession: key.tmuxSession,
      sessionCreated: key.sessionCreated,
      text,
      createTime: now.toISOString(),
      state: "queued",
    };
    await this.update((messages) => {
      const mine = messages.filter((m) => sameSession(m, key)).length;
      if (mine >= MAX_QUEUED_PER_SESSION) {
        throw new ConnectError(
          `${key.tmuxSession} already has ${mine} queued messages (at most ${MAX_QUEUED_PER_SESSION}); cancel one or wait until they are typed`,
          Code.ResourceExhausted,
        );
      }
      const sessions = new Set(messages.map((m) => `${m.tmuxSession}\0${m.sessionCreated}`));
      if (mine === 0 && sessions.size >= MAX_QUEUED_SESSIONS) {
        throw new ConnectError(
          `${sessions.size} sessions on this machine already have queued messages (at most ${MAX_QUEUED_SESSIONS})`,
          Code.ResourceExhausted,
        );
      }
      return [...messages, entry];
    });
    return entry;
  }

  /**
   * Removes a message that is not being typed. NOT_FOUND when there is none of that id (typed or
   * cancelled already). A message being typed is waited for (up to CANCEL_WAIT_MS): one whose typing
   * was refused before a key went out (the session was busy after all) is then cancelled; one typed
   * meanwhile, or still being typed, is FAILED_PRECONDITION.
   */
  async cancel(key: SessionKey, id: string): Promise<void> {
    await this.open();
    const deadline = Date.now() + CANCEL_WAIT_MS;
    const typing = () => this.entries?.some((m) => m.id === id && sameSession(m, key) && m.state === "typing");
    let waited = false;
    // While the cancel waits, the delivery hands the message out no more (takeNext skips it).
    this.cancelling.add(id);
    try {
      while (typing()) {
        if (Date.now() >= deadline) {
          throw new ConnectError(
            `the queued message ${id} is being typed now; it cannot be cancelled`,
            Code.FailedPrecondition,
          );
        }
        waited = true;
        await sleep(CANCEL_POLL_MS);
      }
      await this.remove(key, id, waited);
    } finally {
      this.cancelling.delete(id);
    }
  }

  private async remove(key: SessionKey, id: string, waited: boolean): Promise<void> {
    await this.update((messages) => {
      const found = messages.find((m) => m.id === id && sameSession(m, key));
      if (!found && waited) {
        throw new ConnectError(
          `the queued message ${id} was typed meanwhile; it cannot be cancelled`,
          Code.FailedPrecondition,
        );
      }
      if (!found) {
        throw new ConnectError(
          `${key.tmuxSession} has no queued message ${id} (it was typed or cancelled already)`,
          Code.NotFound,
        );
      }
      if (found.state === "typing") {
        throw new ConnectError(
          `the queued message ${id} is being typed now; it cannot be cancelled`,
          Code.FailedPrecondition,
        );
      }
      return messages.filter((m) => m !== found);
    });
  }

  /** Marks the session's oldest waiting message `typing` (written to the file first) and returns it. */
  async takeNext(key: SessionKey): Promise<QueuedEntry | undefined> {
    await this.open();
    let taken: QueuedEntry | undefined;
    await this.update((messages) => {
      const next = messages.find((m) => sameSession(m, key) && m.state === "queued" && !this.cancelling.has(m.id));
      if (!next) return messages;
      taken = { ...next, state: "typing" };
      return messages.map((m) => (m === next ? (taken as QueuedEntry) : m));
    });
    return taken;
  }

  /** The message was typed (or cannot be, ever): it leaves the queue. */
  async done(id: string): Promise<void> {
    await this.update((messages) => messages.filter((m) => m.id !== id));
  }

  /** Typing was refused before a key went out (a prompt appeared meanwhile): it waits again. */
  async putBack(id: string): Promise<void> {
    await this.update((messages) => messages.map((m) => (m.id === id ? { ...m, state: "queued" as const } : m)));
  }

  /** Typing failed part-way (or its outcome is not known): listed as uncertain, never typed again by itself. */
  async markUnsure(id: string): Promise<void> {
    await this.update((messages) => messages.map((m) => (m.id === id ? { ...m, state: "unsure" as const } : m)));
  }

  /** Drops the messages of sessions that no longer exist (tmux has none of that name and creation time). */
  async forgetExcept(live: readonly SessionKey[]): Promise<void> {
    await this.open();
    const alive = new Set(live.map((k) => `${k.tmuxSession}\0${k.sessionCreated}`));
    if ((this.entries ?? []).every((m) => alive.has(`${m.tmuxSession}\0${m.sessionCreated}`))) return;
    await this.update((messages) => messages.filter((m) => alive.has(`${m.tmuxSession}\0${m.sessionCreated}`)));
  }

  private async update(change: (messages: QueuedEntry[]) => QueuedEntry[]): Promise<void> {
    const file = await this.file.update((current) => ({ ...current, messages: change(current.messages) }));
    this.entries = file.messages;
  }
}

/** The contract's QueuedMessage for one entry. */
export function toQueuedMessage(entry: QueuedEntry): QueuedMessage {
  const time = new Date(entry.createTime);
  return create(QueuedMessageSchema, {
    id: entry.id,
    text: entry.text,
    typing: entry.state === "typing",
    uncertain: entry.state === "unsure",
    ...(Number.isNaN(time.getTime()) ? {} : { createTime: timestampFromDate(time) }),
  });
}
