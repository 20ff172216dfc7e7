import type { Cli } from "../../../gen/staragent/v1/session_pb.js";
import type { ParsedMessage } from "../chat/chat-parser.js";

/**
 * The native log a CLI process is bound to (by the same binding its status uses, `LogBinder`), as
 * chat history needs it: a transcript or rollout file, or opencode's database and one session in it.
 */
export interface ChatLogRef {
  /** The JSONL file (Claude Code, Codex), or the database file (opencode). */
  readonly path: string;
  /** The session inside the database (opencode); "" for JSONL logs. */
  readonly session: string;
}

/** One chat message read from a native log. */
export interface HistoryMessage extends ParsedMessage {
  /**
   * Its id: a non-negative integer that increases along the log and stays the same whichever page
   * the message is read in (derived from where its record lies: a byte offset, a database row).
   */
  readonly id: number;
  /** When the log says it was written (undefined when the log has no time for it). */
  readonly time?: Date;
}

/** What a history read is asked for. */
export interface HistoryRequest {
  /** Messages wanted at least (fewer only when the log's start or a read bound comes first). */
  readonly limit: number;
  /** Only messages with ids below this (an `olderBefore` of an earlier read); undefined: the newest. */
  readonly before?: number;
  /**
   * Read back at least to the message with this id (a follower's newest known message), even past
   * `limit`, up to MAX_HISTORY_MESSAGES; `reachedSince` says whether it got there.
   */
  readonly since?: number;
}

/**
 * Ids per log record (a JSONL line, a database message): a message's id is its record's position
 * times this plus its place among the record's messages. A page starts at a record's first message,
 * so the next older page (ids below it) holds the whole of every record before it. Records hold one
 * to a few messages; this leaves room while keeping ids of a 1 TB log exact in a double.
 */
export const IDS_PER_RECORD = 1024;

/** The id where the record holding message `id` starts (the first id of that record). */
export function recordStart(id: number): number {
  return Math.floor(id / IDS_PER_RECORD) * IDS_PER_RECORD;
}

/** Most messages one history read returns, whatever `limit` and `since` ask for. */
export const MAX_HISTORY_MESSAGES = 2000;

/** Messages read from a native log: a contiguous stretch of it, ending at `before` or the newest. */
export interface HistoryWindow {
  /** Oldest first. */
  readonly messages: readonly HistoryMessage[];
  /** True when the log holds older messages than the window (or may: a read bound was hit). */
  readonly hasMore: boolean;
  /** Pass as `before` to read the messages older than this window. */
  readonly olderBefore: number;
  /** True when `since` was asked and the window reaches back to it. */
  readonly reachedSince: boolean;
  /**
   * Identity of the log's contents (path and inode, or database and session): ids from one log never
   * name messages of another, so cursors and page tokens carry it.
   */
  readonly logKey: string;
  /** Short name of the log for people ("transcript 3f1c….jsonl", "opencode.db session ses_…"). */
  readonly label: string;
}

/**
 * Reads one CLI's native log as chat messages, backward from the newest (or from `before`), so the
 * newest page costs the same whatever the log's size. Each CLI has its reader in its own folder
 * (`agents/<cli>/`); the chat backend finds it by `cli`. Never throws for missing or malformed state:
 * a log that cannot be read is undefined (the chat then shows the screen).
 */
export interface ChatHistoryReader {
  readonly cli: Cli;
  read(log: ChatLogRef, request: HistoryRequest): Promise<HistoryWindow | undefined>;
}
