import { createHash } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { isCursor, MAX_CURSOR_LENGTH } from "./chat-cursor.js";

/** Messages at the end of the client's copy a cursor remembers (besides its newest logged one). */
const CURSOR_TAIL = 4;

/** A message of a chat read from a native log (and the screen's live tail), with its id and digest. */
export interface ChatEntry {
  readonly id: number;
  readonly digest: string;
  /** True for a message read from the native log (false: the screen's provisional tail). */
  readonly logged: boolean;
}

/** What a log-backed chat's cursor holds: which log, and the client's newest messages. */
interface LogCursor {
  readonly v: 2;
  /** The log's generation: a digest of its identity (`HistoryWindow.logKey`). */
  readonly g: string;
  /** [id, digest] of the client's last messages, oldest first. */
  readonly t: ReadonlyArray<readonly [number, string]>;
  /** [id, digest] of the client's newest message read from the log, when not among `t`. */
  readonly a?: readonly [number, string];
}

/** A page token: which log, and the id older messages lie below (null: the whole log). */
interface PageToken {
  readonly v: 2;
  readonly g: string;
  readonly b: number | null;
}

/** The generation of a log: ids of one log never name messages of another. */
export function logGeneration(logKey: string): string {
  return createHash("sha256").update(logKey).digest("base64url").slice(0, 16);
}

/** The cursor of a client that now holds the end of `chat` (oldest first). */
export function encodeLogCursor(generation: string, chat: readonly ChatEntry[]): string {
  const tail = chat.slice(-CURSOR_TAIL);
  const anchor = [...chat].reverse().find((m) => m.logged);
  const cursor: LogCursor = {
    v: 2,
    g: generation,
    t: tail.map((m) => [m.id, m.digest] as const),
    ...(anchor && !tail.includes(anchor) ? { a: [anchor.id, anchor.digest] as const } : {}),
  };
  return encode(cursor);
}

/** What a client's cursor says, once decoded: undefined for a cursor of another chat (a reset). */
export interface ClientCopy {
  readonly generation: string;
  /** The client's remembered messages, oldest first. */
  readonly entries: ReadonlyArray<readonly [number, string]>;
}

/**
 * Decodes a cursor for a log-backed chat: undefined when it is a valid cursor of the screen-only
 * numbering (the chat changed source: a reset); INVALID_ARGUMENT for a cursor GetChat did not make.
 */
export function decodeLogCursor(cursor: string): ClientCopy | undefined {
  const value = decode(cursor, "cursor", "pass next_cursor unchanged, or none");
  if (isLogCursor(value)) {
    const entries = [...(value.a ? [value.a] : []), ...value.t];
    return { generation: value.g, entries };
  }
  if (isCursor(value)) return undefined;
  throw invalid("cursor", "pass next_cursor unchanged, or none");
}

/** True for the decoded form of a log-backed chat's cursor (a screen chat given one resets). */
export function isLogCursor(value: unknown): value is LogCursor {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    v.v === 2 &&
    typeof v.g === "string" &&
    Array.isArray(v.t) &&
    v.t.length <= CURSOR_TAIL &&
    v.t.every(isEntry) &&
    (v.a === undefined || isEntry(v.a))
  );
}

/** The part of a chat a client needs; undefined when its copy cannot be brought up to date (reset). */
export function logDelta<T extends ChatEntry>(chat: readonly T[], copy: ClientCopy): T[] | undefined {
  if (copy.entries.length === 0) return undefined;
  const byId = new Map(chat.map((m, i) => [m.id, i]));
  let previous = -1;
  for (const [id, digest] of copy.entries) {
    const at = byId.get(id);
    if (at === undefined) {
      // Gone (a screen message the log now records under its own id): resend from the last one kept.
      return previous < 0 ? undefined : chat.slice(previous);
    }
    if (chat[at]?.digest !== digest) return chat.slice(at);
    previous = at;
  }
  return chat.slice(previous + 1);
}

/** The smallest id of a client's copy: a read must reach back to it. */
export function oldestEntry(copy: ClientCopy): number | undefined {
  let oldest: number | undefined;
  for (const [id] of copy.entries) if (oldest === undefined || id < oldest) oldest = id;
  return oldest;
}

/** A page token for the messages of log `generation` below `before` (null: the whole log). */
export function encodePageToken(generation: string, before: number | null): string {
  const token: PageToken = { v: 2, g: generation, b: before };
  return encode(token);
}

/** Decodes `before`; INVALID_ARGUMENT for a token GetChat did not make. */
export function decodePageToken(token: string): { generation: string; before: number | undefined } {
  const value = decode(token, "before", "pass older_page_token unchanged");
  if (typeof value !== "object" || value === null) throw invalid("before", "pass older_page_token unchanged");
  const v = value as Record<string, unknown>;
  if (v.v !== 2 || typeof v.g !== "string" || !(v.b === null || (Number.isSafeInteger(v.b) && (v.b as number) >= 0))) {
    throw invalid("before", "pass older_page_token unchanged");
  }
  return { generation: v.g, before: v.b === null ? undefined : (v.b as number) };
}

function isEntry(e: unknown): e is readonly [number, string] {
  return Array.isArray(e) && e.length === 2 && Number.isSafeInteger(e[0]) && typeof e[1] === "string";
}

function encode(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString("base64url");
}

function decode(token: string, field: string, hint: string): unknown {
  if (token.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(token)) throw invalid(field, hint);
  try {
    return JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch {
    throw invalid(field, hint);
  }
}

function invalid(field: string, hint: string): ConnectError {
  const what = field === "cursor" ? "a cursor" : "a page token";
  return new ConnectError(`${field}: not ${what} returned by GetChat (${hint})`, Code.InvalidArgument);
}
