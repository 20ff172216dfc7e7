import { type FileHandle, open } from "node:fs/promises";
import { BoundedMap } from "../../../common/bounded-map.js";
import { readLinesForward } from "../backward-lines.js";
import { type FileStamp, stampFile } from "../file-stamp.js";
import { type JsonRecord, parseRecord } from "../log-follower.js";
import { type NewestRecordsReducer, readNewestRecords } from "./followed-file.js";

/** How a CLI's log turns records into totals: applied oldest first, once per record. */
export interface TotalsReducer<S> extends NewestRecordsReducer<S> {
  /**
   * A predicate for one backward walk (a fresh one per walk): true once the records seen, newest
   * first, hold every figure but the totals (Claude Code: a real prompt older than a reply with
   * usage). A big log's first read walks back to it instead of reading the whole log.
   */
  enough(): (record: JsonRecord) => boolean;
}

/**
 * Largest log whose first read goes through it whole before answering; a bigger one is answered from
 * its newest turn (read backward) while its totals are counted in the background.
 */
export const WHOLE_FIRST_READ_BYTES = 8 * 1024 * 1024;

/** Bytes read per step on a log's first read, so a gigabyte log never sits in memory at once. */
export const TOTALS_CHUNK_BYTES = 1024 * 1024;
/**
 * Bytes at the start of a log that tell a log that was truncated and written again past its old
 * size (same inode, larger) from one that grew: the former is read again from the start.
 */
const HEAD_BYTES = 512;
/**
 * Longest line parsed: a longer one (no CLI writes a record this big; a corrupt or foreign file may
 * hold one) is skipped without being held in memory whole.
 */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;
/** Logs remembered at once; the oldest is forgotten past this (a forgotten log is read again). */
const MAX_FOLLOWED = 1024;

interface Entry<S> extends FileStamp {
  /** Offset after the newest complete line applied. */
  readonly end: number;
  /** The first HEAD_BYTES bytes (fewer while the file was shorter): a grown log still starts so. */
  readonly head: Buffer;
  readonly state: S;
}

/** The totals of one log, and whether this read looked at its contents. */
export interface FollowedTotals<S> {
  readonly state: S;
  readonly mtimeMs: number;
  /** Bytes read from the file by this call (0: size and mtime were unchanged). */
  readonly bytesRead: number;
  /**
   * False while a big log's totals are still being counted in the background: `state` then holds
   * the newest turn only (its totals are not the conversation's), and a read after the count ends
   * holds the whole log's.
   */
  readonly complete: boolean;
}

/** A big log's newest turn, followed while its whole count runs. */
interface Tail<S> extends FileStamp {
  readonly end: number;
  readonly state: S;
}

/**
 * Keeps totals that need a whole log (Claude Code records per-request usage only) without reading it
 * again: the first read goes through the file once, forward, in TOTALS_CHUNK_BYTES steps; after that
 * a log whose size and mtime did not change costs one `stat`, and one that grew costs only its new
 * bytes. A log that was replaced (another inode: rotation), truncated, rewritten in place or
 * truncated and written past its old size (its first bytes differ) is read again from the start, so
 * the totals always equal a full read of the file as it is.
 *
 * The first read of a log over WHOLE_FIRST_READ_BYTES does not wait for that: it walks back from the
 * end to the newest turn's start (as the status reader does, so it costs what a small log's does) and
 * answers `complete: false` from it, while the whole log is counted in the background, one log at a
 * time and one step per turn of the event loop; reads after the count ends are complete.
 */
export class TotalsFollower<S> {
  private readonly entries = new BoundedMap<string, Entry<S>>(MAX_FOLLOWED);
  private readonly tails = new BoundedMap<string, Tail<S>>(MAX_FOLLOWED);
  /** Logs whose whole count is queued or running. */
  private readonly counting = new Map<string, Promise<void>>();
  /** The background counts run one after another: this is the newest one queued. */
  private queue: Promise<void>;
  /** Bumped by `clear`, so a count that started before it does not store its result. */
  private generation = 0;

  /**
   * `countsAfter`: background counts start only once it resolves (tests hold it to see a pending
   * read; by default they start at once).
   */
  constructor(
    private readonly reducer: TotalsReducer<S>,
    countsAfter: Promise<void> = Promise.resolve(),
  ) {
    this.queue = countsAfter;
  }

  /** The totals of the log at `path`, or undefined when it cannot be read. */
  async read(path: string): Promise<FollowedTotals<S> | undefined> {
    const stamped = await stampFile(path, this.entries);
    if (!stamped) {
      this.tails.delete(path);
      return undefined;
    }
    const { info, cached } = stamped;
    if (stamped.unchanged && cached)
      return { state: cached.state, mtimeMs: info.mtimeMs, bytesRead: 0, complete: true };
    let file: FileHandle;
    try {
      file = await open(path, "r");
    } catch {
      this.entries.delete(path);
      return undefined;
    }
    try {
      const head = await readHead(file, info.size);
      const grew =
        cached !== undefined &&
        cached.ino === info.ino &&
        info.size > cached.size &&
        head.subarray(0, cached.head.length).equals(cached.head);
      if (!grew && info.size > WHOLE_FIRST_READ_BYTES) {
        this.entries.delete(path);
        return await this.readTail(path, file, info);
      }
      const from = grew ? { state: cached.state, end: cached.end } : { state: this.reducer.initial(), end: 0 };
      const counted = await this.count(file, from.state, from.end, info.size, false);
      this.entries.set(path, { ...info, end: counted.end, head, state: counted.state });
      this.tails.delete(path);
      return {
        state: counted.state,
        mtimeMs: info.mtimeMs,
        bytesRead: head.length + counted.bytesRead,
        complete: true,
      };
    } catch {
      this.entries.delete(path);
      return undefined;
    } finally {
      await file.close();
    }
  }

  /** Resolves once every background count queued so far has ended (tests and benchmarks wait on it). */
  async settled(): Promise<void> {
    while (this.counting.size > 0) await Promise.all(this.counting.values());
  }

  /** Forgets every log (tests and benchmarks measure first reads with it). */
  clear(): void {
    this.generation++;
    this.entries.clear();
    this.tails.clear();
  }

  /**
   * A big log not counted yet: its newest turn, walked back to from the end (or followed forward from
   * the last such walk when it only grew), and its whole count queued.
   */
  private async readTail(path: string, file: FileHandle, info: FileStamp): Promise<FollowedTotals<S>> {
    const tail = this.tails.get(path);
    const grown = tail && tail.ino === info.ino && info.size > tail.size ? tail : undefined;
    const { state, end, bytesRead } = await readNewestRecords(file, info.size, grown, this.reducer);
    this.tails.set(path, { ...info, end, state });
    this.countInBackground(path);
    return { state, mtimeMs: info.mtimeMs, bytesRead, complete: false };
  }

  /** Queues the whole count of `path` (once while one is queued), stored as a first read's would be. */
  private countInBackground(path: string): void {
    if (this.counting.has(path)) return;
    const generation = this.generation;
    const run = this.queue.then(async () => {
      try {
        const stamped = await stampFile(path, this.entries);
        if (!stamped) return;
        const file = await open(path, "r");
        try {
          const head = await readHead(file, stamped.info.size);
          const counted = await this.count(file, this.reducer.initial(), 0, stamped.info.size, true);
          if (generation === this.generation)
            this.entries.set(path, { ...stamped.info, end: counted.end, head, state: counted.state });
        } finally {
          await file.close();
        }
      } catch {
        // Unreadable now: the next read of the log tries again.
      } finally {
        this.counting.delete(path);
      }
    });
    this.counting.set(path, run);
    this.queue = run;
  }

  /**
   * Applies the complete lines between `from` and `size` to `state`, in TOTALS_CHUNK_BYTES steps
   * (longer lines in doubling steps up to MAX_LINE_BYTES, longer still skipped); `yieldEach` lets
   * the event loop run between steps (a background count).
   */
  private async count(
    file: FileHandle,
    initial: S,
    from: number,
    size: number,
    yieldEach: boolean,
  ): Promise<{ state: S; end: number; bytesRead: number }> {
    let state = initial;
    let end = from;
    let bytesRead = 0;
    let step = TOTALS_CHUNK_BYTES;
    // Up to the size stat saw: bytes written since are read next time.
    while (end < size) {
      if (yieldEach) await new Promise((resolve) => setImmediate(resolve));
      const to = Math.min(size, end + step);
      const chunk = await readLinesForward(file, end, to);
      bytesRead += to - end;
      if (chunk.end === end) {
        // No newline in this step: a partial last line (read next time), or a line longer than a step.
        if (to === size) break;
        if (step < MAX_LINE_BYTES) {
          step *= 2;
          continue;
        }
        const skipped = await skipLine(file, to, size);
        bytesRead += skipped.bytesRead;
        if (skipped.next < 0) break;
        end = skipped.next;
        step = TOTALS_CHUNK_BYTES;
        continue;
      }
      step = TOTALS_CHUNK_BYTES;
      for (const line of chunk.lines) {
        const record = parseRecord(line);
        if (record) state = this.reducer.apply(state, record);
      }
      end = chunk.end;
    }
    return { state, end, bytesRead };
  }
}

/** A file's first HEAD_BYTES bytes (all of it when shorter). */
async function readHead(file: FileHandle, size: number): Promise<Buffer> {
  const buffer = Buffer.alloc(Math.min(HEAD_BYTES, size));
  const { bytesRead } = await file.read(buffer, 0, buffer.length, 0);
  return buffer.subarray(0, bytesRead);
}

/** The offset after the next newline at or after `from` (-1 when none before `size`), read in steps. */
async function skipLine(file: FileHandle, from: number, size: number): Promise<{ next: number; bytesRead: number }> {
  const buffer = Buffer.allocUnsafe(TOTALS_CHUNK_BYTES);
  let position = from;
  while (position < size) {
    const { bytesRead } = await file.read(buffer, 0, Math.min(buffer.length, size - position), position);
    if (bytesRead === 0) break;
    const nl = buffer.subarray(0, bytesRead).indexOf(0x0a);
    if (nl >= 0) return { next: position + nl + 1, bytesRead: position + bytesRead - from };
    position += bytesRead;
  }
  return { next: -1, bytesRead: position - from };
}
