import { join } from "node:path";
import type Database from "better-sqlite3";
import { BoundedMap } from "../../../common/bounded-map.js";
import { parseRecord } from "../log-follower.js";
import { objectField, stringField } from "../record-fields.js";
import type { UsageReading } from "../usage/usage.js";
import { databaseState, OpencodeConnections } from "./db-connections.js";
import { prepared } from "./statements.js";
import { queryUsage } from "./usage.js";

/** Messages looked at, newest first, to find the newest turn's user and assistant messages. */
const RECENT_MESSAGES = 16;
/** The error a tool call gets when the user rejects its permission (1.18: "The user rejected permission to use this specific tool call."). */
const REJECTED = /\brejected permission\b/i;
/** Query answers remembered (64 per database for up to 16 data folders in use). */
const MAX_CACHED_ANSWERS = 16 * 64;
/** Root sessions of one folder considered as a pane's own (the most recently updated). */
const MAX_CANDIDATE_SESSIONS = 16;
/**
 * How long an answer kept because its session's version (SESSION_VERSION) did not change is trusted
 * without asking again: two writes of one row within one millisecond leave the version as it was.
 */
const VERSION_TRUSTED_MS = 10_000;
/**
 * What every per-session answer reads, cheaply, as one string: the session's message count (an
 * index-only count), its RECENT_MESSAGES newest messages with their update times, the count and
 * update times of those messages' parts, and the session row's update and compaction times. The
 * turn, the prompt and the newest usage come from those rows; the usage sums from all messages,
 * whose count is here (an old message's tokens are not rewritten). Reading it costs the same in a
 * long conversation as in a short one.
 */
const SESSION_VERSION = `WITH recent AS (SELECT id, time_updated FROM message WHERE session_id = @id
    ORDER BY time_created DESC, id DESC LIMIT ${RECENT_MESSAGES})
  SELECT (SELECT count(*) FROM message WHERE session_id = @id) || ':' ||
  ifnull((SELECT group_concat(id || '@' || time_updated) FROM recent), '') || ':' ||
  ifnull((SELECT count(*) || '@' || total(time_updated) FROM part WHERE message_id IN (SELECT id FROM recent)), '') || ':' ||
  ifnull((SELECT ifnull(time_updated, '') || '@' || ifnull(time_compacting, '') FROM session WHERE id = @id), '')
  AS version`;

/** One remembered answer: the database stamp and session version it was read at. */
interface CachedAnswer {
  stamp: string;
  readonly value: unknown;
  readonly version: string | undefined;
  readonly queriedAt: number;
  /** False once kept past a stamp change on an unchanged version (trusted for VERSION_TRUSTED_MS). */
  verified: boolean;
}

/** opencode's database of a process: `$XDG_DATA_HOME/opencode/opencode.db`, else under `$HOME/.local/share`. */
export function opencodeDbPath(env: Readonly<Record<string, string | undefined>>): string {
  const dataHome = env.XDG_DATA_HOME || join(env.HOME || "/", ".local", "share");
  return join(dataHome, "opencode", "opencode.db");
}

/** The newest turn of the pane's opencode session. */
export interface OpencodeTurnState {
  readonly turn: "active" | "completed" | "interrupted" | "none";
  /** The session's id ("" when the folder has no root session). */
  readonly sessionId: string;
  /** Id of the user message that opened the newest turn: the turn's identity. */
  readonly userMessageId: string;
  /** When that user message was created (ms since the epoch; 0 when unknown). */
  readonly userMessageAt: number;
  /** True when a tool is pending or running (an approval may be on screen: it is held in memory only). */
  readonly toolRunning: boolean;
  /** Newest update of the session, in ms since the epoch (0 when none). */
  readonly updatedMs: number;
  readonly decidedBy: string;
  /** The text of the newest turn's reply once completed: the newest answer's text parts ("" otherwise). */
  readonly replyText: string;
}

/** A state with no session, for an empty or missing database. */
export const NO_OPENCODE_SESSION: OpencodeTurnState = {
  turn: "none",
  sessionId: "",
  userMessageId: "",
  userMessageAt: 0,
  toolRunning: false,
  updatedMs: 0,
  decidedBy: "no session for this folder",
  replyText: "",
};

/**
 * Reads opencode's SQLite state (1.2 and later) read-only: the root sessions of a folder, and of one
 * session its newest user message and the assistant messages answering it (docs/status.md, "Per CLI"). Results are
 * cached on the database's and its WAL's size and mtime, so an idle session costs two `stat` calls
 * per poll.
 */
export class OpencodeDb {
  private readonly connections = new OpencodeConnections();
  private readonly cache = new BoundedMap<string, CachedAnswer>(MAX_CACHED_ANSWERS);
  /** Per database and session, its version at one stamp: the answers of one look share it. */
  private readonly versions = new BoundedMap<string, { readonly stamp: string; readonly version: string | undefined }>(
    MAX_CACHED_ANSWERS,
  );
  /** Per database, its state being read: the sessions of one look that share a database share it. */
  private readonly states = new Map<string, ReturnType<typeof databaseState>>();

  /** The root sessions of `directory` updated at or after `sinceMs`; undefined when there is no database. */
  async sessionsSince(path: string, directory: string, sinceMs: number): Promise<OpencodeSession[] | undefined> {
    return this.cached(path, `sessions\0${directory}\0${sinceMs}`, (db) => querySessions(db, directory, sinceMs));
  }

  /**
   * The text of session `sessionId`'s newest user message ("" when none), for telling apart two
   * opencode TUIs in one folder: asked only while instances share a folder.
   */
  async newestPrompt(path: string, sessionId: string): Promise<string | undefined> {
    return this.cached(path, `prompt\0${sessionId}`, (db) => newestPrompt(db, sessionId), sessionId);
  }

  /** The turn state of session `sessionId`; undefined when there is no database. */
  async readSession(path: string, sessionId: string): Promise<OpencodeTurnState | undefined> {
    return this.cached(path, `turn\0${sessionId}`, (db) => queryTurn(db, sessionId), sessionId);
  }

  /** The usage of session `sessionId` (undefined when there is no database or no reply yet). */
  async readUsage(path: string, sessionId: string): Promise<UsageReading | undefined> {
    const usage = await this.cached(path, `usage\0${sessionId}`, (db) => queryUsage(db, sessionId) ?? null, sessionId);
    return usage ?? undefined;
  }

  /**
   * Runs `query` unless the database and its WAL are unchanged since it last ran for `key`, or, for an
   * answer about session `sessionId`, unless that session's version is: one opencode database holds
   * every session of the user, so a write of one would otherwise have every other session's answers
   * read again.
   */
  private async cached<T>(
    path: string,
    key: string,
    query: (db: Database.Database) => T,
    sessionId?: string,
  ): Promise<T | undefined> {
    const state = await this.state(path);
    if (!state) {
      this.connections.forget(path);
      return undefined;
    }
    const { stamp } = state;
    const cacheKey = `${path}\0${key}`;
    const cached = this.cache.get(cacheKey);
    const now = Date.now();
    const trusted = cached !== undefined && now - cached.queriedAt < VERSION_TRUSTED_MS;
    if (cached?.stamp === stamp && (cached.verified || trusted)) return cached.value as T;
    const db = this.connections.get(path, state.ino);
    const version = sessionId === undefined ? undefined : this.sessionVersion(db, path, sessionId, stamp);
    if (cached && trusted && version !== undefined && version === cached.version) {
      cached.stamp = stamp;
      cached.verified = false;
      return cached.value as T;
    }
    let value: T;
    try {
      value = query(db);
    } catch (err) {
      // Locked or mid-migration: keep what was known, try again at the next poll.
      if (cached) return cached.value as T;
      throw err;
    }
    this.cache.set(cacheKey, { stamp, value, version, queriedAt: now, verified: true });
    return value;
  }

  /** Session `sessionId`'s version (SESSION_VERSION) at `stamp`; undefined when it cannot be read. */
  private sessionVersion(db: Database.Database, path: string, sessionId: string, stamp: string): string | undefined {
    const key = `${path}\0${sessionId}`;
    const known = this.versions.get(key);
    if (known?.stamp === stamp) return known.version;
    let version: string | undefined;
    try {
      version =
        (prepared(db, SESSION_VERSION).get({ id: sessionId }) as { version: string | null } | undefined)?.version ??
        undefined;
    } catch {
      // Locked or an older schema: the answers are read in full.
      version = undefined;
    }
    this.versions.set(key, { stamp, version });
    return version;
  }

  /** The database's state, read once for every caller while a read of it is in flight. */
  private state(path: string): ReturnType<typeof databaseState> {
    let state = this.states.get(path);
    if (!state) {
      state = databaseState(path).finally(() => this.states.delete(path));
      this.states.set(path, state);
    }
    return state;
  }

  /** Closes every connection. */
  close(): void {
    this.connections.close();
  }
}

interface MessageRow {
  readonly id: string;
  readonly data: string;
}

/** A root session of a folder, as a candidate for a pane's own session. */
export interface OpencodeSession {
  readonly id: string;
  readonly updatedMs: number;
}

/** Root sessions of `directory` updated since `sinceMs`, newest first. */
export function querySessions(db: Database.Database, directory: string, sinceMs: number): OpencodeSession[] {
  const rows = prepared(
    db,
    "SELECT id, time_updated FROM session WHERE directory = ? AND parent_id IS NULL AND time_updated >= ? ORDER BY time_updated DESC LIMIT ?",
  ).all(directory, sinceMs, MAX_CANDIDATE_SESSIONS) as { id: string; time_updated: number }[];
  return rows.map((r) => ({ id: r.id, updatedMs: Number(r.time_updated) || 0 }));
}

/** The text parts of a session's newest user message, joined. */
function newestPrompt(db: Database.Database, sessionId: string): string {
  const users = prepared(
    db,
    "SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created DESC, id DESC LIMIT ?",
  ).all(sessionId, RECENT_MESSAGES) as MessageRow[];
  const user = users.find((m) => stringField(parseRecord(m.data), "role") === "user");
  if (!user) return "";
  const parts = prepared(db, "SELECT data FROM part WHERE message_id = ? ORDER BY id").all(user.id) as {
    data: string;
  }[];
  return parts
    .map((p) => parseRecord(p.data))
    .filter((p) => stringField(p, "type") === "text" && p?.synthetic !== true)
    .map((p) => stringField(p, "text"))
    .join("\n");
}

/** Applies docs/status.md's opencode rules to the newest messages of session `sessionId`. */
export function queryTurn(db: Database.Database, sessionId: string): OpencodeTurnState {
  const session = prepared(db, "SELECT id, time_updated FROM session WHERE id = ?").get(sessionId) as
    | { id: string; time_updated: number }
    | undefined;
  if (!session) return NO_OPENCODE_SESSION;
  const rows = prepared(
    db,
    "SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created DESC, id DESC LIMIT ?",
  ).all(session.id, RECENT_MESSAGES) as MessageRow[];
  const base = { ...NO_OPENCODE_SESSION, sessionId: session.id, updatedMs: Number(session.time_updated) || 0 };
  const messages = rows.map((r) => ({ id: r.id, data: parseRecord(r.data) }));
  const userIndex = messages.findIndex((m) => stringField(m.data, "role") === "user");
  if (userIndex < 0) return { ...base, decidedBy: "no user message" };
  const user = messages[userIndex];
  const userMessageId = user?.id ?? "";
  const created = objectField(user?.data, "time")?.created;
  const userMessageAt = typeof created === "number" && Number.isFinite(created) ? created : 0;
  const turnBase = { ...base, userMessageId, userMessageAt };
  // Newer than the user message: the assistant messages answering it (newest first).
  const answers = messages.slice(0, userIndex).filter((m) => stringField(m.data, "role") === "assistant");
  const newest = answers[0];
  if (!newest?.data) return { ...turnBase, turn: "active", decidedBy: "user message awaiting an answer" };
  const error = objectField(newest.data, "error");
  if (error) {
    const name = stringField(error, "name");
    return name === "MessageAbortedError"
      ? { ...turnBase, turn: "interrupted", decidedBy: name }
      : { ...turnBase, turn: "completed", decidedBy: `error ${name || "unknown"}` };
  }
  const finish = stringField(newest.data, "finish");
  const completed = objectField(newest.data, "time")?.completed;
  const tools = toolStates(db, newest.id);
  const toolRunning = tools.some((t) => t.status === "pending" || t.status === "running");
  // Esc on the permission dialog rejects the call and stops the turn: nothing follows `tool-calls`.
  if (finish === "tool-calls" && !toolRunning && tools.some((t) => t.status === "error" && REJECTED.test(t.error))) {
    return { ...turnBase, turn: "interrupted", decidedBy: "permission rejected" };
  }
  if (finish !== "tool-calls" && (finish !== "" || completed !== undefined) && !toolRunning) {
    return { ...turnBase, turn: "completed", decidedBy: `finish ${finish}`, replyText: replyText(db, answers) };
  }
  return {
    ...turnBase,
    turn: "active",
    toolRunning,
    decidedBy: toolRunning ? "tool running" : finish === "tool-calls" ? "finish tool-calls" : "assistant unfinished",
  };
}

/**
 * The reply of a completed turn: the text parts of the newest answer that has any (a turn of several
 * steps ends with its words in its last assistant message; a step of tool calls alone has none).
 */
function replyText(db: Database.Database, answers: readonly { id: string }[]): string {
  const statement = prepared(db, "SELECT data FROM part WHERE message_id = ? ORDER BY id");
  for (const answer of answers) {
    const texts = (statement.all(answer.id) as { data: string }[])
      .map((p) => parseRecord(p.data))
      .filter((p) => stringField(p, "type") === "text" && p?.synthetic !== true)
      .map((p) => stringField(p, "text"))
      .filter((t) => t.trim() !== "");
    if (texts.length > 0) return texts.join("\n");
  }
  return "";
}

/** The state of each tool part of a message. */
function toolStates(db: Database.Database, messageId: string): { status: string; error: string }[] {
  const parts = prepared(db, "SELECT data FROM part WHERE message_id = ?").all(messageId) as { data: string }[];
  return parts
    .map((p) => parseRecord(p.data))
    .filter((part) => stringField(part, "type") === "tool")
    .map((part) => {
      const state = objectField(part, "state");
      return { status: stringField(state, "status"), error: stringField(state, "error") };
    });
}
