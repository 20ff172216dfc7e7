import { type FileHandle, open, stat } from "node:fs/promises";
import { basename } from "node:path";
import { MAX_BACKWARD_BYTES, readLinesBackward, readLinesForward } from "./backward-lines.js";
import {
  type ChatLogRef,
  type HistoryRequest,
  type HistoryWindow,
  IDS_PER_RECORD,
  MAX_HISTORY_MESSAGES,
} from "./chat-history.js";
import {
  emptySpan,
  type Item,
  MAX_CACHED_MESSAGES,
  MAX_ORPHAN_RESULTS,
  type MappedMessage,
  type Span,
  trimMap,
  trimSpan,
  window,
} from "./history-span.js";
import { type JsonRecord, parseRecord } from "./log-follower.js";

/** Record mappers build MappedMessage values; they find it beside JsonlHistory, which takes them. */
export type { MappedMessage } from "./history-span.js";

/** Logs whose newest stretch is kept at once; the least recently read is forgotten past this. */
const MAX_CACHED_LOGS = 64;
/** Growth read forward at once; a log that grew more since its last read is walked backward anew. */
const MAX_FORWARD_BYTES = 16 * 1024 * 1024;
/**
 * How far past an older page's end its tool calls' results are looked for (a call and its result lie
 * in one turn; a turn's records rarely span more).
 */
const RESULT_LOOKAHEAD_BYTES = 4 * 1024 * 1024;
/**
 * Bytes read per step when walking a log backward for chat: a page of 50 messages in a real Claude
 * Code transcript spans about 1 to 2 MB (attachments and request dumps between the messages), and
 * each read is a round trip through libuv's thread pool, which costs more than copying the bytes.
 */
const HISTORY_BLOCK_BYTES = 1024 * 1024;
/**
 * Backward walks (each up to MAX_BACKWARD_BYTES) one read may make: bounds the cost of a page in a
 * log whose records are mostly not conversation; the page then holds fewer messages and `hasMore`.
 */
const MAX_EXTENDS_PER_READ = 2;

/** A tool's result as a record holds it. */
export interface MappedResult {
  readonly callId: string;
  /** The short result shown as the tool message's text. */
  readonly text: string;
}

/**
 * How one CLI's JSONL log turns into chat messages, one record at a time. Pure and record-local, so
 * a message is the same whichever read (page, follower) meets its record.
 */
export interface RecordMapper {
  /** True when the line cannot hold a message or a tool result (a cheap look before parsing it). */
  skipLine(line: Buffer): boolean;
  /** The chat messages of one record, in order ([] for records that are not conversation). */
  messages(record: JsonRecord): MappedMessage[];
  /** The tool results one record carries. */
  results(record: JsonRecord): MappedResult[];
}

/**
 * Reads a CLI's JSONL log (Claude Code transcript, Codex rollout) as chat messages through its
 * `RecordMapper`, backward from the end in blocks (`readLinesBackward`), so the newest page costs the
 * same for a 1 GB log as for a 1 MB one. The newest stretch of each log is kept and followed forward
 * as the log grows (an unchanged log costs one `stat`); older pages are read on request. A tool call's
 * result, written later in the log, becomes the call's text.
 */
export class JsonlHistory {
  private readonly spans = new Map<string, Span>();

  constructor(private readonly mapper: RecordMapper) {}

  async read(log: ChatLogRef, request: HistoryRequest): Promise<HistoryWindow | undefined> {
    let info: Awaited<ReturnType<typeof stat>>;
    try {
      info = await stat(log.path);
    } catch {
      this.spans.delete(log.path);
      return undefined;
    }
    if (!info.isFile()) return undefined;
    const limit = Math.max(1, Math.min(request.limit, MAX_HISTORY_MESSAGES));
    let file: FileHandle;
    try {
      file = await open(log.path, "r");
    } catch {
      return undefined;
    }
    try {
      const span = await this.newestSpan(file, log.path, info);
      const logKey = `${log.path}\0${info.ino}`;
      const label = basename(log.path);
      const spanStartId = span.start * IDS_PER_RECORD;
      if (request.before === undefined || request.before > spanStartId) {
        const ok = await this.fill(file, span, limit, request);
        if (ok) return { ...window(span.items, span.start, limit, request), logKey, label };
      }
      // Older than what is kept: read that stretch on its own, results looked for past its end.
      const upto = Math.floor((request.before ?? span.start * IDS_PER_RECORD) / IDS_PER_RECORD);
      const older = emptySpan(info, Math.min(upto, info.size));
      await this.extend(file, older, limit, undefined);
      await this.resolveAhead(file, older);
      return { ...window(older.items, older.start, limit, { ...request, since: undefined }), logKey, label };
    } catch {
      this.spans.delete(log.path);
      return undefined;
    } finally {
      await file.close();
    }
  }

  /** Forgets every log (tests and benchmarks measure cold reads with it). */
  clear(): void {
    this.spans.clear();
  }

  /** The kept newest stretch of the log, brought up to its current end. */
  private async newestSpan(file: FileHandle, path: string, info: { ino: number; size: number; mtimeMs: number }) {
    let span = this.spans.get(path);
    this.spans.delete(path);
    if (span && (span.ino !== info.ino || info.size < span.size || info.size - span.end > MAX_FORWARD_BYTES)) {
      span = undefined;
    }
    if (!span) {
      span = emptySpan(info, info.size);
      // The end is after the newest complete line; a partial last line is left for the next read.
      const { end } = await readLinesBackward(file, info.size, () => true);
      span.start = end;
      span.end = end;
    } else if (info.size !== span.size || info.mtimeMs !== span.mtimeMs) {
      await this.grow(file, span, info.size);
      span.size = info.size;
      span.mtimeMs = info.mtimeMs;
    }
    this.spans.set(path, span);
    while (this.spans.size > MAX_CACHED_LOGS) {
      const oldest = this.spans.keys().next().value;
      if (oldest === undefined) break;
      this.spans.delete(oldest);
    }
    return span;
  }

  /** Extends the kept span backward until it can answer `request`; false when it may not hold more. */
  private async fill(file: FileHandle, span: Span, limit: number, request: HistoryRequest): Promise<boolean> {
    for (let round = 0; round < MAX_EXTENDS_PER_READ; round++) {
      const below = request.before === undefined ? span.items : span.items.filter((i) => i.id < (request.before ?? 0));
      const enough = below.length >= limit;
      const reached = request.since === undefined || (span.items[0]?.id ?? Number.POSITIVE_INFINITY) <= request.since;
      if ((enough && reached) || span.start === 0) return true;
      if (span.items.length >= MAX_CACHED_MESSAGES) return request.before === undefined;
      const start = span.start;
      const want = reached ? limit - below.length : MAX_HISTORY_MESSAGES;
      await this.extend(file, span, Math.max(1, want), request.since);
      if (span.start === start) return true;
    }
    return true;
  }

  /**
   * Reads backward from `span.start` until `count` more messages (and the message `since`, when
   * given) are in, or MAX_BACKWARD_BYTES were read; tool results met on the way wait for their calls.
   */
  private async extend(file: FileHandle, span: Span, count: number, since: number | undefined): Promise<void> {
    const found: Item[] = [];
    const pending = new Map<string, string>();
    let oldest = span.start;
    await readLinesBackward(
      file,
      span.start,
      (line, offset) => {
        oldest = offset;
        if (this.mapper.skipLine(line)) return false;
        const record = parseRecord(line);
        if (!record) return false;
        for (const result of this.mapper.results(record)) {
          if (!pending.has(result.callId)) pending.set(result.callId, result.text);
        }
        const messages = this.mapper.messages(record);
        // Newest first while walking back: the record's messages go in reversed.
        for (let k = Math.min(messages.length, IDS_PER_RECORD) - 1; k >= 0; k--) {
          const message = messages[k] as MappedMessage;
          const item: Item = { id: offset * IDS_PER_RECORD + k, message };
          const callId = message.callId;
          if (callId !== undefined) {
            item.result = pending.get(callId) ?? span.orphans.get(callId);
            pending.delete(callId);
            span.orphans.delete(callId);
          }
          found.push(item);
        }
        const reached = since === undefined || offset * IDS_PER_RECORD <= since;
        return found.length >= count && reached;
      },
      { blockBytes: HISTORY_BLOCK_BYTES, maxBytes: MAX_BACKWARD_BYTES },
    );
    found.reverse();
    for (const item of found) if (item.message.callId !== undefined) span.calls.set(item.message.callId, item);
    for (const [callId, text] of pending) span.orphans.set(callId, text);
    trimMap(span.orphans, MAX_ORPHAN_RESULTS);
    span.items = [...found, ...span.items];
    span.start = oldest;
  }

  /** Applies what was appended to the log since the span's end. */
  private async grow(file: FileHandle, span: Span, size: number): Promise<void> {
    const { lines, offsets, end } = await readLinesForward(file, span.end, size);
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i] as Buffer;
      const offset = offsets[i] as number;
      if (this.mapper.skipLine(line)) continue;
      const record = parseRecord(line);
      if (!record) continue;
      const messages = this.mapper.messages(record);
      for (let k = 0; k < Math.min(messages.length, IDS_PER_RECORD); k++) {
        const message = messages[k] as MappedMessage;
        const item: Item = { id: offset * IDS_PER_RECORD + k, message };
        if (message.callId !== undefined) span.calls.set(message.callId, item);
        span.items.push(item);
      }
      for (const result of this.mapper.results(record)) {
        const call = span.calls.get(result.callId);
        if (call) call.result ??= result.text;
        else if (!span.orphans.has(result.callId)) span.orphans.set(result.callId, result.text);
      }
    }
    span.end = end;
    trimMap(span.orphans, MAX_ORPHAN_RESULTS);
    trimSpan(span);
  }

  /** Finds the results of an older page's unanswered calls in the bytes after it. */
  private async resolveAhead(file: FileHandle, span: Span): Promise<void> {
    const open = new Map<string, Item>();
    for (const item of span.items) {
      if (item.message.callId !== undefined && item.result === undefined) open.set(item.message.callId, item);
    }
    if (open.size === 0) return;
    const { lines } = await readLinesForward(file, span.end, Math.min(span.size, span.end + RESULT_LOOKAHEAD_BYTES));
    for (const line of lines) {
      if (this.mapper.skipLine(line)) continue;
      const record = parseRecord(line);
      if (!record) continue;
      for (const result of this.mapper.results(record)) {
        const call = open.get(result.callId);
        if (!call) continue;
        call.result = result.text;
        open.delete(result.callId);
      }
      if (open.size === 0) return;
    }
  }
}
