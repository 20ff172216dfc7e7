import { open } from "node:fs/promises";
import { BoundedMap } from "../../../common/bounded-map.js";
import { stampFile } from "../file-stamp.js";
import { type NewestRecordsReducer, readNewestRecords } from "./followed-file.js";

/**
 * How a CLI's log gives its newest usage from its newest records: a backward walk collects records
 * newest first until `enough`, then replays them oldest first through `apply`; growth is applied as
 * it arrives.
 */
export type RecentUsageReducer<S> = NewestRecordsReducer<S>;

/** Logs remembered at once; the oldest is forgotten past this (a forgotten log is walked again). */
const MAX_FOLLOWED = 1024;

interface Entry<S> {
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
  readonly end: number;
  readonly state: S;
}

/** The usage state of one log, and whether this read looked at its contents. */
export interface FollowedUsage<S> {
  readonly state: S;
  readonly mtimeMs: number;
  /** Bytes read by this call (0: size and mtime were unchanged). */
  readonly bytesRead: number;
}

/**
 * Follows a log whose newest records hold cumulative figures (Codex's `total_token_usage`): an
 * unchanged log costs one `stat`; a grown one only its new bytes; a new, replaced (rotated) or
 * truncated one a backward walk from the end to the records `enough` asks for, so the cost does not
 * grow with the log.
 */
export class RecentUsageFollower<S> {
  private readonly entries = new BoundedMap<string, Entry<S>>(MAX_FOLLOWED);

  constructor(private readonly reducer: RecentUsageReducer<S>) {}

  /** The usage state of the log at `path`, or undefined when it cannot be read. */
  async read(path: string): Promise<FollowedUsage<S> | undefined> {
    const stamped = await stampFile(path, this.entries);
    if (!stamped) return undefined;
    const { info, cached } = stamped;
    if (stamped.unchanged && cached) return { state: cached.state, mtimeMs: info.mtimeMs, bytesRead: 0 };
    try {
      const file = await open(path, "r");
      try {
        const grown = cached && cached.ino === info.ino && info.size > cached.size ? cached : undefined;
        const { state, end, bytesRead } = await readNewestRecords(file, info.size, grown, this.reducer);
        this.entries.set(path, { ino: info.ino, size: info.size, mtimeMs: info.mtimeMs, end, state });
        return { state, mtimeMs: info.mtimeMs, bytesRead };
      } finally {
        await file.close();
      }
    } catch {
      this.entries.delete(path);
      return undefined;
    }
  }

  /** Forgets every log. */
  clear(): void {
    this.entries.clear();
  }
}
