import type { ParsedMessage } from "../chat/chat-parser.js";
import {
  type HistoryMessage,
  type HistoryRequest,
  type HistoryWindow,
  IDS_PER_RECORD,
  MAX_HISTORY_MESSAGES,
} from "./chat-history.js";

/**
 * The stretch of a JSONL log that `JsonlHistory` keeps per log, and how a history read's answer is
 * cut from it.
 */

/**
 * Messages kept per followed log (the newest stretch): enough for a follower and the first pages;
 * older pages are read without keeping them.
 */
export const MAX_CACHED_MESSAGES = 4000;
/** Tool results remembered whose call lies before the kept stretch (for when it is extended). */
export const MAX_ORPHAN_RESULTS = 4096;

/** A message as a record mapper returns it: a chat message, plus what pairs a tool call with its result. */
export interface MappedMessage extends ParsedMessage {
  /** For a tool call: the id its result names. */
  readonly callId?: string;
  readonly time?: Date;
}

/** One message of a span, with its id and (for a tool call) its result once read. */
export interface Item {
  readonly id: number;
  readonly message: MappedMessage;
  result?: string;
}

/** A contiguous stretch of a log, read into messages: `[start, end)` in bytes. */
export interface Span {
  readonly ino: number;
  size: number;
  mtimeMs: number;
  start: number;
  end: number;
  items: Item[];
  /** Tool calls in the span by call id, waiting for (or holding) their results. */
  readonly calls: Map<string, Item>;
  /** Results in the span whose calls lie before `start`. */
  readonly orphans: Map<string, string>;
}

/** A span of nothing yet, at byte `at` of the log described by `info`. */
export function emptySpan(info: { ino: number; size: number; mtimeMs: number }, at: number): Span {
  return {
    ino: info.ino,
    size: info.size,
    mtimeMs: info.mtimeMs,
    start: at,
    end: at,
    items: [],
    calls: new Map(),
    orphans: new Map(),
  };
}

/**
 * The answer to `request` from a span's messages: the last `limit` below `before` (or from `since`
 * on), never starting inside a record, so the next older page (`olderBefore`, a record's start) holds
 * the rest of it.
 */
export function window(
  items: readonly Item[],
  spanStart: number,
  limit: number,
  request: HistoryRequest,
): Omit<HistoryWindow, "logKey" | "label"> {
  let end = items.length;
  if (request.before !== undefined) {
    const before = request.before;
    end = items.findIndex((i) => i.id >= before);
    if (end < 0) end = items.length;
  }
  let from = Math.max(0, end - limit);
  let reachedSince = false;
  if (request.since !== undefined) {
    const since = request.since;
    let at = -1;
    for (let i = 0; i < end; i++) if ((items[i] as Item).id <= since) at = i;
    if (at >= 0) {
      reachedSince = true;
      from = Math.min(from, at);
    } else if (spanStart === 0) {
      reachedSince = true;
      from = 0;
    }
    if (end - from > MAX_HISTORY_MESSAGES) {
      from = end - MAX_HISTORY_MESSAGES;
      reachedSince = false;
    }
  }
  // Whole records only: back up to the first message of the record `from` lies in.
  const recordOf = (i: number) => Math.floor((items[i] as Item).id / IDS_PER_RECORD);
  while (from > 0 && from < end && recordOf(from - 1) === recordOf(from)) from--;
  const chosen = items.slice(from, end);
  const first = chosen[0];
  const olderBefore = first
    ? Math.floor(first.id / IDS_PER_RECORD) * IDS_PER_RECORD
    : Math.min(request.before ?? Number.POSITIVE_INFINITY, spanStart * IDS_PER_RECORD);
  return {
    messages: chosen.map(toHistoryMessage),
    hasMore: from > 0 || spanStart > 0,
    olderBefore,
    reachedSince,
  };
}

function toHistoryMessage(item: Item): HistoryMessage {
  const { callId: _callId, time, ...message } = item.message;
  return {
    ...message,
    ...(item.result !== undefined ? { text: item.result } : {}),
    id: item.id,
    ...(time ? { time } : {}),
  };
}

/** Drops the oldest records of a span past MAX_CACHED_MESSAGES, keeping their results as orphans. */
export function trimSpan(span: Span): void {
  if (span.items.length <= MAX_CACHED_MESSAGES) return;
  let cut = span.items.length - MAX_CACHED_MESSAGES;
  const recordOf = (i: number) => Math.floor((span.items[i] as Item).id / IDS_PER_RECORD);
  while (cut < span.items.length && recordOf(cut) === recordOf(cut - 1)) cut++;
  for (const item of span.items.slice(0, cut)) {
    const callId = item.message.callId;
    if (callId === undefined) continue;
    span.calls.delete(callId);
    if (item.result !== undefined) span.orphans.set(callId, item.result);
  }
  span.items = span.items.slice(cut);
  const first = span.items[0];
  span.start = first ? Math.floor(first.id / IDS_PER_RECORD) : span.end;
  trimMap(span.orphans, MAX_ORPHAN_RESULTS);
}

/** Forgets a map's oldest entries past `max`. */
export function trimMap(map: Map<string, unknown>, max: number): void {
  while (map.size > max) {
    const oldest = map.keys().next().value;
    if (oldest === undefined) return;
    map.delete(oldest);
  }
}
