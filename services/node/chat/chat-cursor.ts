import { Code, ConnectError } from "@connectrpc/connect";
import type { NumberedChat, NumberedMessage } from "./message-ids.js";

/** Messages at the end of a read that a cursor remembers, to tell "unchanged" from "replaced". */
const CURSOR_TAIL = 4;
/** Longest cursor accepted: ours are about 200 characters; anything far longer is not one of ours. */
export const MAX_CURSOR_LENGTH = 2048;

/** What a GetChat cursor holds: where the client's copy ends and what its last messages were. */
interface Cursor {
  /** The numbering generation the ids belong to. */
  readonly g: string;
  /** The history size the chat was read with (another size is another numbering). */
  readonly h: number;
  /** The id after the client's last message. */
  readonly n: number;
  /** [id, digest] of the client's last messages, oldest first. */
  readonly t: ReadonlyArray<readonly [number, string]>;
}

/** Builds the cursor for a client that now holds all of `chat`. */
export function encodeCursor(chat: NumberedChat, historyLines: number): string {
  const tail = chat.messages.slice(-CURSOR_TAIL).map((m) => [m.id, m.digest] as const);
  const cursor: Cursor = { g: chat.generation, h: historyLines, n: chat.nextId, t: tail };
  return Buffer.from(JSON.stringify(cursor)).toString("base64url");
}

/** The part of a chat a client with `cursor` needs: everything when `reset`, else what changed. */
export interface ChatDelta {
  readonly messages: readonly NumberedMessage[];
  readonly reset: boolean;
}

/**
 * Compares the client's copy (described by `cursor`) with the chat read now. The client's last
 * messages must still be there under the same ids; the very last may have changed (an answer that was
 * still growing). Otherwise, or when the cursor belongs to another numbering, the whole chat is sent
 * again with `reset`. INVALID_ARGUMENT for a cursor GetChat did not make.
 */
export function chatDelta(chat: NumberedChat, historyLines: number, cursor: string): ChatDelta {
  const all = { messages: chat.messages, reset: true };
  if (cursor === "") return all;
  const parsed = decodeCursor(cursor);
  // A cursor of the chat read from a native log: this chat is now read off the screen.
  if (!parsed) return all;
  if (parsed.g !== chat.generation || parsed.h !== historyLines) return all;
  const byId = new Map(chat.messages.map((m) => [m.id, m]));
  const tail = parsed.t;
  for (const [id, digest] of tail.slice(0, -1)) {
    if (byId.get(id)?.digest !== digest) return all;
  }
  const last = tail[tail.length - 1];
  let from = parsed.n;
  if (last) {
    const now = byId.get(last[0]);
    if (!now) return all;
    if (now.digest !== last[1]) from = last[0];
  } else if (chat.messages.length > 0 && (chat.messages[0]?.id ?? 0) > parsed.n) {
    return all;
  }
  if (chat.nextId < parsed.n) return all;
  return { messages: chat.messages.filter((m) => m.id >= from), reset: false };
}

function decodeCursor(cursor: string): Cursor | undefined {
  const invalid = () =>
    new ConnectError(
      "cursor: not a cursor returned by GetChat (pass next_cursor unchanged, or none)",
      Code.InvalidArgument,
    );
  if (cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw invalid();
  }
  if (isCursor(value)) return value;
  if (typeof value === "object" && value !== null && (value as Record<string, unknown>).v === 2) return undefined;
  throw invalid();
}

/** True for the decoded form of a screen chat's cursor (a chat read from a native log given one resets). */
export function isCursor(value: unknown): value is Cursor {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.g === "string" &&
    Number.isSafeInteger(v.h) &&
    Number.isSafeInteger(v.n) &&
    Array.isArray(v.t) &&
    v.t.length <= CURSOR_TAIL &&
    v.t.every((e) => Array.isArray(e) && e.length === 2 && Number.isSafeInteger(e[0]) && typeof e[1] === "string")
  );
}
