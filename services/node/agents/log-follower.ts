import { open } from "node:fs/promises";
import { BoundedMap } from "../../common/bounded-map.js";
import { readLinesBackward, readLinesForward } from "./backward-lines.js";
import { stampFile } from "./file-stamp.js";

/** One parsed JSONL record (an object; anything else on a line is skipped). */
export type JsonRecord = Readonly<Record<string, unknown>>;

/**
 * How one CLI's log turns records into a turn state. The same `apply` serves both directions: a
 * backward walk collects records newest first until `opensTurn`, then replays them oldest first;
 * later growth of the file is applied as it arrives.
 */
export interface LifecycleReducer<S> {
  /** The state before any record (no turn). */
  initial(): S;
  /** True for the record that opens a turn: a backward walk needs nothing older. */
  opensTurn(record: JsonRecord): boolean;
  /** The state after `record` (records come oldest first). */
  apply(state: S, record: JsonRecord): S;
}

/** What the follower knows about one log. */
export interface FollowedLog<S> {
  readonly path: string;
  readonly size: number;
  readonly mtimeMs: number;
  readonly state: S;
  /** True when this read looked at the file's contents (false: size and mtime were unchanged). */
  readonly reread: boolean;
}

/**
 * Logs remembered at once; the oldest is forgotten past this, so a machine with thousands of past
 * sessions does not grow the cache without bound (a forgotten log is simply walked backward again).
 */
const MAX_FOLLOWED_LOGS = 2048;

interface Entry<S> {
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
  /** Offset after the newest complete line applied. */
  readonly end: number;
  readonly state: S;
}

/**
 * Follows JSONL logs cheaply: a log whose size and mtime did not change costs one `stat`; a log that
 * grew is read only from where the previous read stopped; anything else (a new file, a rewritten or
 * truncated one) is walked backward from the end to the record that opened the newest turn.
 * Malformed lines are skipped; a missing or unreadable file reads as undefined, never an error.
 */
export class LogFollower<S> {
  private readonly entries = new BoundedMap<string, Entry<S>>(MAX_FOLLOWED_LOGS);

  constructor(private readonly reducer: LifecycleReducer<S>) {}

  /** The state of the log at `path`, or undefined when it cannot be read. */
  async read(path: string): Promise<FollowedLog<S> | undefined> {
    const stamped = await stampFile(path, this.entries);
    if (!stamped) return undefined;
    const { info, cached } = stamped;
    if (cached && stamped.unchanged) {
      return { path, size: info.size, mtimeMs: info.mtimeMs, state: cached.state, reread: false };
    }
    let entry: Entry<S>;
    try {
      const grew = cached !== undefined && cached.ino === info.ino && info.size > cached.size;
      entry = grew ? await this.readGrowth(path, cached, info) : await this.readBackward(path, info);
    } catch {
      this.entries.delete(path);
      return undefined;
    }
    this.entries.set(path, entry);
    return { path, size: info.size, mtimeMs: info.mtimeMs, state: entry.state, reread: true };
  }

  /** Forgets every log (tests and benchmarks measure cold reads with it). */
  clear(): void {
    this.entries.clear();
  }

  private async readBackward(path: string, info: { ino: number; size: number; mtimeMs: number }): Promise<Entry<S>> {
    const file = await open(path, "r");
    try {
      const newestFirst: JsonRecord[] = [];
      const { end } = await readLinesBackward(file, info.size, (line) => {
        const record = parseRecord(line);
        if (!record) return false;
        newestFirst.push(record);
        return this.reducer.opensTurn(record);
      });
      let state = this.reducer.initial();
      for (let i = newestFirst.length - 1; i >= 0; i--) state = this.reducer.apply(state, newestFirst[i] as JsonRecord);
      return { ino: info.ino, size: info.size, mtimeMs: info.mtimeMs, end, state };
    } finally {
      await file.close();
    }
  }

  private async readGrowth(
    path: string,
    cached: Entry<S>,
    info: { ino: number; size: number; mtimeMs: number },
  ): Promise<Entry<S>> {
    const file = await open(path, "r");
    try {
      const { lines, end } = await readLinesForward(file, cached.end, info.size);
      let state = cached.state;
      for (const line of lines) {
        const record = parseRecord(line);
        if (record) state = this.reducer.apply(state, record);
      }
      return { ino: info.ino, size: info.size, mtimeMs: info.mtimeMs, end, state };
    } finally {
      await file.close();
    }
  }
}

/** Parses one line as a JSON object; undefined for anything else (a torn or foreign line). */
export function parseRecord(line: Buffer | string): JsonRecord | undefined {
  try {
    const value: unknown = JSON.parse(typeof line === "string" ? line : line.toString("utf8"));
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as JsonRecord) : undefined;
  } catch {
    return undefined;
  }
}
