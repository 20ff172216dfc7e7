import type Database from "better-sqlite3";
import { ChatRole, Cli } from "../../../../gen/staragent/v1/session_pb.js";
import {
  type ChatHistoryReader,
  type ChatLogRef,
  type HistoryMessage,
  type HistoryRequest,
  type HistoryWindow,
  IDS_PER_RECORD,
  MAX_HISTORY_MESSAGES,
} from "../chat-history.js";
import { capText, shortResult } from "../history-text.js";
import { type JsonRecord, parseRecord } from "../log-follower.js";
import { objectField, stringField } from "../record-fields.js";
import { databaseState, OpencodeConnections } from "./db-connections.js";

/**
 * A chat message's id is its database message's rowid times this plus its part's place in the
 * message, so ids follow the conversation and stay the same in every page.
 */
const IDS_PER_MESSAGE = IDS_PER_RECORD;
/** Place of the system message an assistant message's error becomes (after all of its parts). */
const ERROR_SLOT = IDS_PER_MESSAGE - 1;
/** Answers remembered per database state (reads of an unchanged database cost two `stat` calls). */
const MAX_CACHED_WINDOWS = 64;
/** The input field naming what each of opencode's tools works on. */
const TOOL_TARGET_FIELDS: Readonly<Record<string, string>> = {
  bash: "command",
  read: "filePath",
  write: "filePath",
  edit: "filePath",
  glob: "pattern",
  grep: "pattern",
  list: "path",
  webfetch: "url",
  task: "description",
};

interface MessageRow {
  readonly r: number;
  readonly id: string;
  readonly time_created: number;
  readonly data: string;
}

/**
 * opencode's database (1.2 and later; docs/status.md "Per CLI") as chat: one session's messages, newest
 * first through the `(session_id, time_created, id)` index, each with its parts: a user message's
 * text, an assistant message's text parts and tool parts (the command or file, and the output once
 * completed), a compaction as one system message (its summary left out), interrupts and errors as
 * system messages. Opened read-only; answers are kept while the database and its WAL are unchanged.
 */
export class OpencodeSessionHistory implements ChatHistoryReader {
  /** `cli` and `name`: a CLI on opencode's core (Kilo CLI) reads its own database alike. */
  constructor(
    readonly cli: Cli = Cli.OPENCODE,
    private readonly name = "opencode",
  ) {}
  private readonly connections = new OpencodeConnections();
  private readonly windows = new Map<string, HistoryWindow>();

  async read(log: ChatLogRef, request: HistoryRequest): Promise<HistoryWindow | undefined> {
    const state = await databaseState(log.path);
    if (!state || log.session === "") return undefined;
    const { ino, stamp } = state;
    const key = `${log.path}\0${log.session}\0${stamp}\0${request.limit}\0${request.before ?? ""}\0${request.since ?? ""}`;
    const cached = this.windows.get(key);
    if (cached) return cached;
    let window: HistoryWindow | undefined;
    try {
      const db = this.connections.get(log.path, ino);
      window = readWindow(db, log, `${log.path}\0${ino}`, request, `${this.name}.db session ${log.session}`);
    } catch {
      return undefined;
    }
    if (window) {
      this.windows.set(key, window);
      while (this.windows.size > MAX_CACHED_WINDOWS) {
        const oldest = this.windows.keys().next().value;
        if (oldest === undefined) break;
        this.windows.delete(oldest);
      }
    }
    return window;
  }

  /** Closes every connection and forgets every answer. */
  clear(): void {
    this.windows.clear();
    this.connections.close();
  }
}

function readWindow(
  db: Database.Database,
  log: ChatLogRef,
  dbKey: string,
  request: HistoryRequest,
  label: string,
): HistoryWindow | undefined {
  const session = db.prepare("SELECT id FROM session WHERE id = ?").get(log.session);
  if (!session) return undefined;
  const logKey = `${dbKey}\0${log.session}`;
  let bound: { t: number; id: string } | undefined;
  if (request.before !== undefined) {
    const row = db
      .prepare("SELECT time_created AS t, id FROM message WHERE rowid = ? AND session_id = ?")
      .get(Math.floor(request.before / IDS_PER_MESSAGE), log.session) as { t: number; id: string } | undefined;
    // The page's first message was removed (opencode's revert): nothing can be placed before it.
    if (!row) return { messages: [], hasMore: false, olderBefore: request.before, reachedSince: false, logKey, label };
    bound = row;
  }
  const limit = Math.max(1, Math.min(request.limit, MAX_HISTORY_MESSAGES));
  const newest = db.prepare(
    "SELECT rowid AS r, id, time_created, data FROM message WHERE session_id = ? ORDER BY time_created DESC, id DESC LIMIT ?",
  );
  const older = db.prepare(
    "SELECT rowid AS r, id, time_created, data FROM message WHERE session_id = ? AND (time_created < ? OR (time_created = ? AND id < ?)) ORDER BY time_created DESC, id DESC LIMIT ?",
  );
  const partsOf = db.prepare("SELECT id, data FROM part WHERE message_id = ? ORDER BY id");
  const collected: HistoryMessage[][] = [];
  let count = 0;
  let more = true;
  let reachedSince = request.since === undefined;
  // Whole database messages, newest first, until the page is full (and reaches `since`).
  reading: while (count < MAX_HISTORY_MESSAGES) {
    const batch = (
      bound ? older.all(log.session, bound.t, bound.t, bound.id, limit) : newest.all(log.session, limit)
    ) as MessageRow[];
    for (let i = 0; i < batch.length; i++) {
      const row = batch[i] as MessageRow;
      const messages = chatMessages(row, partsOf.all(row.id) as { id: string; data: string }[]);
      collected.push(messages);
      count += messages.length;
      if (request.since !== undefined && row.r * IDS_PER_MESSAGE <= request.since) reachedSince = true;
      bound = { t: row.time_created, id: row.id };
      if (count >= limit && reachedSince) {
        more = i < batch.length - 1 || batch.length === limit;
        break reading;
      }
    }
    if (batch.length < limit) {
      more = false;
      break;
    }
  }
  if (!more && request.since !== undefined) reachedSince = true;
  const messages = collected.reverse().flat();
  const first = messages[0];
  return {
    messages,
    hasMore: more,
    olderBefore: first ? Math.floor(first.id / IDS_PER_MESSAGE) * IDS_PER_MESSAGE : (request.before ?? 0),
    reachedSince,
    logKey,
    label,
  };
}

/** The chat messages of one database message and its parts. */
function chatMessages(row: MessageRow, parts: readonly { id: string; data: string }[]): HistoryMessage[] {
  const data = parseRecord(row.data);
  const role = stringField(data, "role");
  const created = objectField(data, "time")?.created;
  const at = typeof created === "number" && Number.isFinite(created) ? created : row.time_created;
  const time = Number.isFinite(at) ? new Date(at) : undefined;
  const base = row.r * IDS_PER_MESSAGE;
  const out: HistoryMessage[] = [];
  // The summary a compaction asks the model for is not an answer: the compaction is one system message.
  if (role === "assistant" && data?.summary === true) return out;
  const userText: string[] = [];
  let userSlot = -1;
  parts.slice(0, ERROR_SLOT).forEach((p, index) => {
    const part = parseRecord(p.data);
    const type = stringField(part, "type");
    const id = base + index;
    if (type === "compaction") {
      out.push({ role: ChatRole.SYSTEM, text: "Conversation compacted", id, time });
    } else if (type === "text") {
      const text = stringField(part, "text").trim();
      if (text === "" || part?.synthetic === true || part?.ignored === true) return;
      if (role === "user") {
        if (userSlot < 0) userSlot = index;
        userText.push(text);
      } else if (role === "assistant") {
        out.push({ role: ChatRole.ASSISTANT, text: capText(text), id, time });
      }
    } else if (type === "tool" && role === "assistant") {
      out.push({ ...toolMessage(part ?? {}), id, time });
    }
  });
  if (userSlot >= 0) {
    out.push({ role: ChatRole.USER, text: capText(userText.join("\n")), id: base + userSlot, time });
    out.sort((a, b) => a.id - b.id);
  }
  const error = objectField(data, "error");
  if (role === "assistant" && error) {
    const name = stringField(error, "name");
    const detail = stringField(objectField(error, "data"), "message");
    const text = name === "MessageAbortedError" ? "Interrupted" : detail || name || "Error";
    out.push({ role: ChatRole.SYSTEM, text: shortResult(text), id: base + ERROR_SLOT, time });
  }
  return out;
}

function toolMessage(part: JsonRecord): Omit<HistoryMessage, "id"> {
  const tool = stringField(part, "tool");
  const state = objectField(part, "state");
  const input = objectField(state, "input");
  const target = stringField(input, TOOL_TARGET_FIELDS[tool] ?? "") || stringField(state, "title");
  const status = stringField(state, "status");
  const output =
    status === "completed" ? stringField(state, "output") : status === "error" ? stringField(state, "error") : "";
  const text =
    status === "completed" && output.trim() === "" ? "(no output)" : output === "" ? "" : shortResult(output);
  return { role: ChatRole.TOOL, toolName: tool, toolTarget: target, text };
}
