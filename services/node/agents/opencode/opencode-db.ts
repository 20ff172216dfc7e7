import { stat } from "node:fs/promises";
import Database from "better-sqlite3";
import { parseRecord } from "../log-follower.js";
import { objectField, stringField } from "../record-fields.js";

/** Messages looked at, newest first, to find the newest turn's user and assistant messages. */
const RECENT_MESSAGES = 16;
/** Database connections kept open (one per data folder in use). */
const MAX_OPEN_DATABASES = 16;
/** How long a read waits for a writer's lock before giving up (the previous state is kept then). */
const BUSY_TIMEOUT_MS = 50;

/** The newest turn of the pane's opencode session. */
export interface OpencodeTurnState {
  readonly turn: "active" | "completed" | "interrupted" | "none";
  /** The session's id ("" when the folder has no root session). */
  readonly sessionId: string;
  /** Id of the user message that opened the newest turn: the turn's identity. */
  readonly userMessageId: string;
  /** True when a tool is pending or running (an approval may be on screen: it is held in memory only). */
  readonly toolRunning: boolean;
  /** Newest update of the session, in ms since the epoch (0 when none). */
  readonly updatedMs: number;
  readonly decidedBy: string;
}

/** A state with no session, for an empty or missing database. */
export const NO_OPENCODE_SESSION: OpencodeTurnState = {
  turn: "none",
  sessionId: "",
  userMessageId: "",
  toolRunning: false,
  updatedMs: 0,
  decidedBy: "no session for this folder",
};

interface OpenDb {
  readonly db: Database.Database;
  readonly ino: number;
}

/**
 * Reads opencode's SQLite state (1.2 and later) read-only: the newest root session whose directory is
 * the pane's cwd, its newest user message and the assistant messages answering it (FORMATS.md).
 * Results are cached on the database's and its WAL's size and mtime, so an idle session costs two
 * `stat` calls per poll.
 */
export class OpencodeDb {
  private readonly open = new Map<string, OpenDb>();
  private readonly cache = new Map<string, { stamp: string; state: OpencodeTurnState }>();

  /** The turn state for `directory` in the database at `path`; undefined when there is no database. */
  async read(path: string, directory: string): Promise<OpencodeTurnState | undefined> {
    const [main, wal] = await Promise.all([
      stat(path).catch(() => undefined),
      stat(`${path}-wal`).catch(() => undefined),
    ]);
    if (!main?.isFile()) {
      this.forget(path);
      return undefined;
    }
    const stamp = `${main.ino}:${main.size}:${main.mtimeMs}:${wal?.size ?? 0}:${wal?.mtimeMs ?? 0}`;
    const key = `${path}\0${directory}`;
    const cached = this.cache.get(key);
    if (cached?.stamp === stamp) return cached.state;
    const db = this.connection(path, main.ino);
    let state: OpencodeTurnState;
    try {
      state = queryTurn(db, directory);
    } catch (err) {
      // Locked or mid-migration: keep what was known, try again at the next poll.
      if (cached) return cached.state;
      throw err;
    }
    this.cache.delete(key);
    this.cache.set(key, { stamp, state });
    if (this.cache.size > MAX_OPEN_DATABASES * 64) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
    return state;
  }

  /** Closes every connection. */
  close(): void {
    for (const path of [...this.open.keys()]) this.forget(path);
  }

  private connection(path: string, ino: number): Database.Database {
    const current = this.open.get(path);
    if (current && current.ino === ino) return current.db;
    this.forget(path);
    const db = new Database(path, { readonly: true, fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
    this.open.set(path, { db, ino });
    if (this.open.size > MAX_OPEN_DATABASES) {
      const oldest = this.open.keys().next().value;
      if (oldest !== undefined) this.forget(oldest);
    }
    return db;
  }

  private forget(path: string): void {
    const current = this.open.get(path);
    if (!current) return;
    this.open.delete(path);
    try {
      current.db.close();
    } catch {
      // Already closed or broken: nothing more to release.
    }
  }
}

interface MessageRow {
  readonly id: string;
  readonly data: string;
}

/** Applies FORMATS.md's rules to the newest messages of the directory's newest root session. */
export function queryTurn(db: Database.Database, directory: string): OpencodeTurnState {
  const session = db
    .prepare(
      "SELECT id, time_updated FROM session WHERE directory = ? AND parent_id IS NULL ORDER BY time_updated DESC LIMIT 1",
    )
    .get(directory) as { id: string; time_updated: number } | undefined;
  if (!session) return NO_OPENCODE_SESSION;
  const rows = db
    .prepare("SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created DESC, id DESC LIMIT ?")
    .all(session.id, RECENT_MESSAGES) as MessageRow[];
  const base = { ...NO_OPENCODE_SESSION, sessionId: session.id, updatedMs: Number(session.time_updated) || 0 };
  const messages = rows.map((r) => ({ id: r.id, data: parseRecord(r.data) }));
  const userIndex = messages.findIndex((m) => stringField(m.data, "role") === "user");
  if (userIndex < 0) return { ...base, decidedBy: "no user message" };
  const user = messages[userIndex];
  const userMessageId = user?.id ?? "";
  // Newer than the user message: the assistant messages answering it (newest first).
  const answers = messages.slice(0, userIndex).filter((m) => stringField(m.data, "role") === "assistant");
  const newest = answers[0];
  if (!newest?.data) return { ...base, turn: "active", userMessageId, decidedBy: "user message awaiting an answer" };
  const error = objectField(newest.data, "error");
  if (error) {
    const name = stringField(error, "name");
    return name === "MessageAbortedError"
      ? { ...base, turn: "interrupted", userMessageId, decidedBy: name }
      : { ...base, turn: "completed", userMessageId, decidedBy: `error ${name || "unknown"}` };
  }
  const finish = stringField(newest.data, "finish");
  const completed = objectField(newest.data, "time")?.completed;
  const toolRunning = runningTool(db, newest.id);
  if (finish !== "tool-calls" && (finish !== "" || completed !== undefined) && !toolRunning) {
    return { ...base, turn: "completed", userMessageId, decidedBy: `finish ${finish}` };
  }
  return {
    ...base,
    turn: "active",
    userMessageId,
    toolRunning,
    decidedBy: toolRunning ? "tool running" : finish === "tool-calls" ? "finish tool-calls" : "assistant unfinished",
  };
}

function runningTool(db: Database.Database, messageId: string): boolean {
  const parts = db.prepare("SELECT data FROM part WHERE message_id = ?").all(messageId) as { data: string }[];
  return parts.some((p) => {
    const part = parseRecord(p.data);
    if (stringField(part, "type") !== "tool") return false;
    const status = stringField(objectField(part, "state"), "status");
    return status === "pending" || status === "running";
  });
}
