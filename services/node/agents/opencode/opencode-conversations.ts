import { realpath } from "node:fs/promises";
import type Database from "better-sqlite3";
import { BoundedMap } from "../../../common/bounded-map.js";
import {
  type ConversationInfo,
  type ConversationLog,
  type ConversationSource,
  conversationLogKey,
  excerpt,
} from "../conversations.js";
import { parseRecord } from "../log-follower.js";
import { stringField } from "../record-fields.js";
import { databaseState, OpencodeConnections } from "./db-connections.js";
import { opencodeDbPath } from "./opencode-db.js";
import { JSON_DATA } from "./statements.js";

/** Summaries kept between calls (for one database state each: any write to the database reads them again). */
const MAX_CACHED_SUMMARIES = 4096;
/** Most root sessions one listing looks at, newest first (a page is cut from these). */
const MAX_LISTED_SESSIONS = 10_000;

interface SessionRow {
  readonly id: string;
  readonly directory: string;
  readonly time_updated: number;
}

/**
 * opencode's past conversations: the root sessions of its database (`opencode.db`, read-only; a
 * session's `directory` is its folder), resumed with `opencode --session <id>`. Each session is one
 * `ConversationLog` whose path is the database's path and the session's id (`conversationLogKey`),
 * which is also how a live session's bound chat log names it.
 */
export class OpencodeConversations implements ConversationSource {
  /** `program` and `dbPath`: a CLI on opencode's core (Kilo CLI) keeps its sessions alike. */
  constructor(
    readonly program = "opencode",
    private readonly dbPath = opencodeDbPath,
  ) {}
  private readonly connections = new OpencodeConnections();
  private readonly summaries = new BoundedMap<string, ConversationInfo | undefined>(MAX_CACHED_SUMMARIES);
  /** The session of each log key handed out by `logs`, so `summarize` never parses a key. */
  private readonly sessions = new BoundedMap<string, { path: string; id: string }>(MAX_LISTED_SESSIONS);

  resumeArgs(id: string): string[] {
    return ["--session", id];
  }

  async logs(env: Readonly<Record<string, string | undefined>>, cwd: string | undefined): Promise<ConversationLog[]> {
    const path = this.dbPath(env);
    const db = await this.open(path);
    if (!db) return [];
    const folders = cwd === undefined ? [] : [...new Set([cwd, await realpath(cwd).catch(() => cwd)])];
    let rows: SessionRow[];
    try {
      rows = (
        folders.length === 0
          ? db
              .prepare(
                "SELECT id, directory, time_updated FROM session WHERE parent_id IS NULL ORDER BY time_updated DESC LIMIT ?",
              )
              .all(MAX_LISTED_SESSIONS)
          : db
              .prepare(
                `SELECT id, directory, time_updated FROM session WHERE parent_id IS NULL AND directory IN (${folders.map(() => "?").join(", ")}) ORDER BY time_updated DESC LIMIT ?`,
              )
              .all(...folders, MAX_LISTED_SESSIONS)
      ) as SessionRow[];
    } catch {
      // Locked or mid-migration: no conversations this time.
      return [];
    }
    return rows.map((row) => {
      const key = conversationLogKey(path, row.id);
      this.sessions.set(key, { path, id: row.id });
      // `size` stands for the session's state: its update time changes with every message.
      return { path: key, mtimeMs: Number(row.time_updated) || 0, size: Number(row.time_updated) || 0 };
    });
  }

  async summarize(log: ConversationLog): Promise<ConversationInfo | undefined> {
    const session = this.sessions.get(log.path);
    const state = session ? await databaseState(session.path) : undefined;
    if (!session || !state) return undefined;
    // Any write to the database changes its stamp: a summary is never older than the database.
    const key = `${log.path}\0${state.stamp}`;
    if (this.summaries.has(key)) return this.summaries.get(key);
    let info: ConversationInfo | undefined;
    try {
      info = summarizeSession(this.connections.get(session.path, state.ino), session.id, log.path);
    } catch {
      // Locked or mid-migration: not listed this time, read again next time.
      return undefined;
    }
    this.summaries.set(key, info);
    return info;
  }

  /** Closes the database connections. */
  close(): void {
    this.connections.close();
  }

  private async open(path: string): Promise<Database.Database | undefined> {
    const state = await databaseState(path);
    if (!state) {
      this.connections.forget(path);
      return undefined;
    }
    try {
      return this.connections.get(path, state.ino);
    } catch {
      return undefined;
    }
  }
}

/**
 * One session's summary: its user messages (one a turn) through the message index, the text of the
 * first and the newest; undefined when it has no prompt yet.
 */
function summarizeSession(db: Database.Database, id: string, logPath: string): ConversationInfo | undefined {
  const session = db.prepare("SELECT directory, time_updated FROM session WHERE id = ?").get(id) as
    | Pick<SessionRow, "directory" | "time_updated">
    | undefined;
  if (!session) return undefined;
  const users = db
    .prepare(
      `SELECT id FROM message WHERE session_id = ? AND json_extract(${JSON_DATA}, '$.role') = 'user' ORDER BY time_created, id`,
    )
    .all(id) as { id: string }[];
  const textOf = db.prepare("SELECT data FROM part WHERE message_id = ? ORDER BY id");
  const prompt = (messageId: string) =>
    (textOf.all(messageId) as { data: string }[])
      .map((p) => parseRecord(p.data))
      .filter((p) => stringField(p, "type") === "text" && p?.synthetic !== true && p?.ignored !== true)
      .map((p) => stringField(p, "text"))
      .join("\n")
      .trim();
  const first = users.map((u) => u.id).find((m) => prompt(m) !== "");
  if (first === undefined) return undefined;
  const newest = users.at(-1)?.id ?? first;
  const last = prompt(newest) || prompt(first);
  return {
    id,
    cwd: session.directory,
    firstPrompt: excerpt(prompt(first)),
    lastPrompt: excerpt(last),
    updateTime: new Date(Number(session.time_updated) || 0),
    turnCount: users.length,
    turnCountExact: true,
    logPath,
  };
}
