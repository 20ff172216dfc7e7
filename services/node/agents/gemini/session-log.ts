import { open } from "node:fs/promises";
import { ChatRole } from "../../../../gen/staragent/v1/session_pb.js";
import { BoundedMap } from "../../../common/bounded-map.js";
import { readLinesForward } from "../backward-lines.js";
import { IDS_PER_RECORD } from "../chat-history.js";
import { stampFile } from "../file-stamp.js";
import type { Item, MappedMessage } from "../history-span.js";
import { capText, shortResult } from "../history-text.js";
import { type JsonRecord, parseRecord } from "../log-follower.js";
import { arrayField, objectField, objects, stringField } from "../record-fields.js";
import { countField, recordTime } from "../usage/usage.js";

/**
 * Bytes of a session file read at most, from its end: Gemini CLI rewrites its whole history into the
 * file after a cancelled tool (`$set messages`), so a long session's file is mostly copies; its chat
 * history reaches back this far (docs/chat.md).
 */
export const MAX_SESSION_READ_BYTES = 64 * 1024 * 1024;
/** Session files followed at once; the least recently read is forgotten past this. */
const MAX_FOLLOWED_SESSIONS = 512;
/**
 * A replay (the history written again as records after a cancelled tool, all within a few ms) ends
 * at its `$set messages`; a replay without one ends at the first record this much younger than its
 * start.
 */
const REPLAY_WINDOW_MS = 1_000;
/** The first words of the context message Gemini CLI puts before the conversation (never typed). */
const SESSION_CONTEXT = "<session_context>";
/** The info record of an interrupted turn (Escape, or a refused tool). */
const REQUEST_CANCELLED = "Request cancelled.";
/** The error a tool's result carries when the person refused it or stopped it. */
const CANCELLED_RESULT = /\[Operation Cancelled\]/;

/** The newest turn of a Gemini CLI session file (docs/status.md, "Gemini CLI"). */
export interface GeminiTurnState {
  readonly turn: "active" | "completed" | "interrupted" | "none";
  /** The id of the `gemini` record whose reply ended the newest turn ("" when none). */
  readonly completionId: string;
  /** The id of the newest typed prompt's record ("" when none). */
  readonly lastUserTurn: string;
  /** The newest typed prompt ("" when none), for finding it on a pane's screen. */
  readonly prompt: string;
  /** When the newest typed prompt was written (ms since the epoch; 0 when none). */
  readonly turnStartedAt: number;
  /** True when the newest model response asked for a tool without a word (the tool runs or waits). */
  readonly toolAsked: boolean;
  /** The record that decided `turn`, for the status detail. */
  readonly decidedBy: string;
}

/** Token figures summed over a session's replies (each `gemini` record counted once). */
export interface GeminiUsageState {
  readonly model: string;
  readonly replies: number;
  readonly input: number;
  readonly output: number;
  readonly cached: number;
  readonly thoughts: number;
  /** The newest reply's input tokens: the context it was sent. */
  readonly lastInput: number;
  /** Tokens of the replies since the newest typed prompt. */
  readonly lastTurn: number;
  readonly updatedAtMs: number;
}

/** What one read of a session file knows. */
export interface GeminiSession {
  readonly path: string;
  readonly mtimeMs: number;
  /** The session id in the file's header ("" when the read began after it). */
  readonly sessionId: string;
  readonly state: GeminiTurnState;
  readonly usage: GeminiUsageState;
  /** Chat messages in the order of the log, each with its id (`offset * IDS_PER_RECORD + k`). */
  readonly items: readonly Item[];
  /** True when this read looked at the file's contents (false: size and mtime were unchanged). */
  readonly reread: boolean;
}

const INITIAL_TURN: GeminiTurnState = {
  turn: "none",
  completionId: "",
  lastUserTurn: "",
  prompt: "",
  turnStartedAt: 0,
  toolAsked: false,
  decidedBy: "no records",
};

const INITIAL_USAGE: GeminiUsageState = {
  model: "",
  replies: 0,
  input: 0,
  output: 0,
  cached: 0,
  thoughts: 0,
  lastInput: 0,
  lastTurn: 0,
  updatedAtMs: 0,
};

interface Entry {
  ino: number;
  size: number;
  mtimeMs: number;
  /** Offset after the newest complete line applied. */
  end: number;
  sessionId: string;
  state: GeminiTurnState;
  usage: GeminiUsageState;
  items: Item[];
  /** Ids of the `gemini` records met, with the text they said (a record is written again with its tools). */
  readonly replies: Map<string, string>;
  /** Tool calls by id, for their results. */
  readonly calls: Map<string, Item>;
  /** Ids of the prompt and notice records met: Gemini CLI may write a record again under its id. */
  readonly written: Set<string>;
  /** While a replay is being skipped: when it began (ms); 0 otherwise. */
  replayFrom: number;
}

/**
 * Reads Gemini CLI session files (`~/.gemini/tmp/<project>/chats/session-*.jsonl`) forward, once, then
 * follows what is appended: an unchanged file costs one `stat`. One pass gives the status state, the
 * usage and the chat, because the file cannot be read record by record backward: a record written
 * again (a reply with its tool calls, once they are resolved) and a replay of the whole history after
 * a cancelled tool mean only what came before them. Never throws: an unreadable file is undefined.
 */
export class GeminiSessionLog {
  private readonly entries = new BoundedMap<string, Entry>(MAX_FOLLOWED_SESSIONS);

  async read(path: string): Promise<GeminiSession | undefined> {
    const stamped = await stampFile(path, this.entries);
    if (!stamped) return undefined;
    const { info } = stamped;
    let entry = stamped.cached;
    if (entry && stamped.unchanged) return view(path, entry, false);
    try {
      if (!entry || entry.ino !== info.ino || info.size < entry.size) entry = await this.fresh(path, info);
      else await this.grow(path, entry, info.size);
    } catch {
      this.entries.delete(path);
      return undefined;
    }
    entry.size = info.size;
    entry.mtimeMs = info.mtimeMs;
    this.entries.set(path, entry);
    return view(path, entry, true);
  }

  /** Forgets every file (tests and benchmarks measure cold reads with it). */
  clear(): void {
    this.entries.clear();
  }

  private async fresh(path: string, info: { ino: number; size: number; mtimeMs: number }): Promise<Entry> {
    const entry: Entry = {
      ino: info.ino,
      size: 0,
      mtimeMs: 0,
      end: 0,
      sessionId: "",
      state: INITIAL_TURN,
      usage: INITIAL_USAGE,
      items: [],
      replies: new Map(),
      calls: new Map(),
      written: new Set(),
      replayFrom: 0,
    };
    // The cut line the read then starts in is not a record and is skipped.
    if (info.size > MAX_SESSION_READ_BYTES) entry.end = info.size - MAX_SESSION_READ_BYTES;
    await this.grow(path, entry, info.size);
    return entry;
  }

  private async grow(path: string, entry: Entry, size: number): Promise<void> {
    const file = await open(path, "r");
    try {
      const { lines, offsets, end } = await readLinesForward(file, entry.end, size);
      for (let i = 0; i < lines.length; i++) {
        const record = parseRecord(lines[i] as Buffer);
        if (record) apply(entry, record, offsets[i] as number);
      }
      entry.end = end;
    } finally {
      await file.close();
    }
  }
}

function view(path: string, entry: Entry, reread: boolean): GeminiSession {
  return {
    path,
    mtimeMs: entry.mtimeMs,
    sessionId: entry.sessionId,
    state: entry.state,
    usage: entry.usage,
    items: entry.items,
    reread,
  };
}

/** The text parts of a record's `content` (an array of parts, or a string in `gemini` records). */
function contentText(record: JsonRecord): string {
  const content = record.content;
  if (typeof content === "string") return content;
  return objects(Array.isArray(content) ? content : [])
    .map((p) => stringField(p, "text"))
    .filter((t) => t !== "")
    .join("\n");
}

/** The `functionResponse` parts of a user record. */
function functionResponses(record: JsonRecord): JsonRecord[] {
  const content = Array.isArray(record.content) ? record.content : [];
  return objects(content)
    .map((p) => objectField(p, "functionResponse"))
    .filter((r): r is JsonRecord => r !== undefined);
}

/** A tool result as text: its `output`, or its `error`. */
function responseText(response: JsonRecord | undefined): string {
  const body = objectField(response, "response");
  const output = stringField(body, "output") || stringField(body, "error");
  return output
    .replace(/^<untrusted_context>\n?/, "")
    .replace(/\n?<\/untrusted_context>$/, "")
    .trim();
}

function push(entry: Entry, offset: number, messages: readonly MappedMessage[]): void {
  for (let k = 0; k < Math.min(messages.length, IDS_PER_RECORD); k++) {
    const message = messages[k] as MappedMessage;
    const item: Item = { id: offset * IDS_PER_RECORD + k, message };
    if (message.callId !== undefined) entry.calls.set(message.callId, item);
    entry.items.push(item);
  }
}

/** Applies one record, oldest first. */
function apply(entry: Entry, record: JsonRecord, offset: number): void {
  const set = objectField(record, "$set");
  if (set) {
    // The end of a replay: the history it wrote again is what was already read.
    if (Array.isArray(set.messages)) entry.replayFrom = 0;
    return;
  }
  if (typeof record.sessionId === "string" && record.type === undefined) {
    entry.sessionId = record.sessionId;
    return;
  }
  const at = recordTime(record);
  if (entry.replayFrom > 0) {
    if (at > 0 && at - entry.replayFrom <= REPLAY_WINDOW_MS) return;
    entry.replayFrom = 0;
  }
  const id = stringField(record, "id");
  const time = at > 0 ? new Date(at) : undefined;
  if (record.type === "user" || record.type === "info") {
    // The same record written again (seen with two instances in one folder) is the same message.
    if (id !== "" && entry.written.has(id)) return;
    if (id !== "") entry.written.add(id);
  }
  switch (record.type) {
    case "user":
      applyUser(entry, record, id, at, time, offset);
      return;
    case "gemini":
      applyReply(entry, record, id, at, time, offset);
      return;
    case "info":
      if (contentText(record) === REQUEST_CANCELLED) {
        entry.state = { ...entry.state, turn: "interrupted", toolAsked: false, decidedBy: "info: Request cancelled." };
        push(entry, offset, [{ role: ChatRole.SYSTEM, text: REQUEST_CANCELLED, time }]);
      }
      return;
    default:
      return;
  }
}

function applyUser(
  entry: Entry,
  record: JsonRecord,
  id: string,
  at: number,
  time: Date | undefined,
  offset: number,
): void {
  const responses = functionResponses(record);
  if (responses.length > 0) {
    for (const response of responses) {
      const call = entry.calls.get(stringField(response, "id"));
      if (call && call.result === undefined) call.result = shortResult(responseText(response) || "(no output)");
    }
    const cancelled = responses.every((r) => CANCELLED_RESULT.test(responseText(r)));
    entry.state = cancelled
      ? { ...entry.state, turn: "interrupted", toolAsked: false, decidedBy: "tool result: cancelled" }
      : { ...entry.state, turn: "active", toolAsked: false, decidedBy: "tool result sent to the model" };
    return;
  }
  const text = contentText(record);
  if (text.startsWith(SESSION_CONTEXT)) {
    // A standalone context record starts a replay of the whole history (after a cancelled tool).
    entry.replayFrom = at > 0 ? at : 1;
    return;
  }
  if (text.trim() === "") return;
  entry.state = {
    turn: "active",
    completionId: entry.state.completionId,
    lastUserTurn: id,
    prompt: text,
    turnStartedAt: at,
    toolAsked: false,
    decidedBy: "typed prompt",
  };
  entry.usage = { ...entry.usage, lastTurn: 0 };
  push(entry, offset, [{ role: ChatRole.USER, text: capText(text), time }]);
}

function applyReply(
  entry: Entry,
  record: JsonRecord,
  id: string,
  at: number,
  time: Date | undefined,
  offset: number,
): void {
  const text = typeof record.content === "string" ? record.content.trim() : "";
  const seen = entry.replies.get(id);
  const again = seen !== undefined;
  entry.replies.set(id, text);
  const messages: MappedMessage[] = [];
  if (text !== "" && seen !== text) messages.push({ role: ChatRole.ASSISTANT, text: capText(text), time });
  const calls = objects(arrayField(record, "toolCalls"));
  for (const call of calls) {
    const callId = stringField(call, "id");
    if (entry.calls.has(callId)) continue;
    const args = objectField(call, "args");
    const target = stringField(args, "command") || stringField(args, "file_path") || stringField(call, "description");
    messages.push({
      role: ChatRole.TOOL,
      toolName: stringField(call, "displayName") || stringField(call, "name"),
      toolTarget: target,
      text: "",
      callId,
      time,
    });
  }
  push(entry, offset, messages);
  for (const call of calls) {
    const item = entry.calls.get(stringField(call, "id"));
    const result = objects(arrayField(call, "result"))
      .map((r) => objectField(r, "functionResponse"))
      .find((r) => r !== undefined);
    if (item && item.result === undefined && result) item.result = shortResult(responseText(result) || "(no output)");
  }
  if (!again) entry.usage = addTokens(entry.usage, record, at);
  if (calls.length > 0) {
    const cancelled = calls.some((c) => stringField(c, "status") === "cancelled");
    entry.state = cancelled
      ? { ...entry.state, turn: "interrupted", toolAsked: false, decidedBy: "tool call cancelled" }
      : { ...entry.state, turn: "active", toolAsked: false, decidedBy: "tool calls resolved" };
    return;
  }
  if (text === "") {
    entry.state = { ...entry.state, turn: "active", toolAsked: true, decidedBy: "reply without text (a tool call)" };
    return;
  }
  entry.state = {
    ...entry.state,
    turn: "completed",
    completionId: id,
    toolAsked: false,
    decidedBy: "reply with text, no end-of-turn record (docs/status.md)",
  };
}

function addTokens(usage: GeminiUsageState, record: JsonRecord, at: number): GeminiUsageState {
  const tokens = objectField(record, "tokens");
  if (!tokens) return usage;
  return {
    model: stringField(record, "model") || usage.model,
    replies: usage.replies + 1,
    input: usage.input + countField(tokens, "input"),
    output: usage.output + countField(tokens, "output"),
    cached: usage.cached + countField(tokens, "cached"),
    thoughts: usage.thoughts + countField(tokens, "thoughts"),
    lastInput: countField(tokens, "input"),
    lastTurn: usage.lastTurn + countField(tokens, "total"),
    updatedAtMs: at || usage.updatedAtMs,
  };
}
