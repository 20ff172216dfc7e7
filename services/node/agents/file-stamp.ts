import { stat } from "node:fs/promises";
import type { BoundedMap } from "../../common/bounded-map.js";

/** What a log follower remembers of a file to tell whether it changed. */
export interface FileStamp {
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
}

/** A file's stamp now, and what its follower remembered of it. */
export interface StampedFile<E extends FileStamp> {
  readonly info: FileStamp;
  readonly cached: E | undefined;
  /** True when the file is as it was (same inode, size and mtime): its remembered state holds. */
  readonly unchanged: boolean;
}

/**
 * The one `stat` every log follower starts a read with: undefined (and forgotten) when the file is
 * gone or not a regular file, else its stamp and whether it changed since `entries` remembered it.
 */
export async function stampFile<E extends FileStamp>(
  path: string,
  entries: BoundedMap<string, E>,
): Promise<StampedFile<E> | undefined> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(path);
  } catch {
    entries.delete(path);
    return undefined;
  }
  if (!info.isFile()) return undefined;
  const cached = entries.get(path);
  const unchanged =
    cached !== undefined && cached.ino === info.ino && cached.size === info.size && cached.mtimeMs === info.mtimeMs;
  return { info: { ino: info.ino, size: info.size, mtimeMs: info.mtimeMs }, cached, unchanged };
}
