import { createHash } from "node:crypto";
import { ChatMessageSource } from "../../../gen/staragent/v1/session_pb.js";
import { type HistoryMessage, type HistoryWindow, recordStart } from "../agents/chat-history.js";
import { liveTail } from "./chat-merge.js";
import type { ParsedMessage } from "./chat-parser.js";
import {
  type ChatEntry,
  type ClientCopy,
  encodeLogCursor,
  encodePageToken,
  logDelta,
  logGeneration,
} from "./log-cursor.js";

/**
 * Screen messages lined up with the log beyond the page asked for: the log window read for a
 * merge holds the page plus this many more than the screen shows, so every screen message can find
 * its logged twin even when the page is small.
 */
export const SCREEN_MERGE_MARGIN = 32;

/** One message of a log-backed chat, as GetChat sends it. */
export interface LogChatMessage extends ChatEntry {
  readonly message: ParsedMessage;
  readonly source: ChatMessageSource;
  readonly time?: Date;
}

/** A log-backed chat's answer, before it becomes a GetChatResponse. */
export interface LogChatAnswer {
  readonly messages: readonly LogChatMessage[];
  readonly reset: boolean;
  readonly nextCursor: string;
  readonly hasMore: boolean;
  readonly olderPageToken: string;
  /** How many screen messages the log did not hold yet (the live tail). */
  readonly screenOnly: number;
}

/** A short digest of a message and where it came from, so cursors can tell "changed" without holding it. */
export function entryDigest(message: ParsedMessage, source: ChatMessageSource): string {
  return createHash("sha256")
    .update(`${source}\0${message.role}\0${message.toolName ?? ""}\0${message.toolTarget ?? ""}\0${message.text}`)
    .digest("base64url")
    .slice(0, 12);
}

/**
 * The chat of a CLI with a native log: the log window (newest messages, reaching back to the
 * client's copy when it follows), then the screen's live tail (what the log does not hold yet,
 * `liveTail`) under provisional ids after the newest logged one. Without a usable `copy` the answer
 * is the newest page (`reset`); with one, what changed since (`logDelta`).
 */
export function answerLogChat(
  window: HistoryWindow,
  screen: readonly ParsedMessage[],
  pageSize: number,
  copy: ClientCopy | undefined,
): LogChatAnswer {
  const generation = logGeneration(window.logKey);
  const { tail } = liveTail(window.messages, screen);
  const logged = window.messages.map(fromLog);
  const base = (window.messages[window.messages.length - 1]?.id ?? -1) + 1;
  const live = tail.map((message, i): LogChatMessage => {
    const source = ChatMessageSource.SCREEN;
    return { id: base + i, digest: entryDigest(message, source), logged: false, message, source };
  });
  const chat = [...logged, ...live];
  const nextCursor = encodeLogCursor(generation, chat);
  const delta = copy && copy.generation === generation ? logDelta(chat, copy) : undefined;
  if (delta) {
    return { messages: delta, reset: false, nextCursor, hasMore: false, olderPageToken: "", screenOnly: live.length };
  }
  let from = Math.max(0, chat.length - pageSize);
  // Whole records: the next older page holds everything below the first one's record.
  const first = chat[from];
  if (first?.logged) {
    const start = recordStart(first.id);
    while (from > 0 && (chat[from - 1] as LogChatMessage).logged && (chat[from - 1] as LogChatMessage).id >= start) {
      from--;
    }
  }
  const page = chat.slice(from);
  const hasMore = from > 0 || window.hasMore;
  const head = page[0];
  const before = head === undefined ? window.olderBefore : head.logged ? recordStart(head.id) : null;
  return {
    messages: page,
    reset: true,
    nextCursor,
    hasMore,
    olderPageToken: hasMore ? encodePageToken(generation, before) : "",
    screenOnly: live.length,
  };
}

/** An older page (`before`): the window's messages as they are, and the token for the page before. */
export function answerOlderPage(window: HistoryWindow): Omit<LogChatAnswer, "nextCursor" | "reset" | "screenOnly"> {
  const generation = logGeneration(window.logKey);
  return {
    messages: window.messages.map(fromLog),
    hasMore: window.hasMore,
    olderPageToken: window.hasMore ? encodePageToken(generation, window.olderBefore) : "",
  };
}

function fromLog(message: HistoryMessage): LogChatMessage {
  const { id, time, ...parsed } = message;
  const source = ChatMessageSource.LOG;
  return { id, digest: entryDigest(parsed, source), logged: true, message: parsed, source, ...(time ? { time } : {}) };
}
