import { stat } from "node:fs/promises";
import Database from "better-sqlite3";

/** Database connections kept open (one per data folder in use). */
const MAX_OPEN_DATABASES = 16;
/**
 * How long a read waits for opencode's write lock before giving up: status keeps the previous
 * state, chat shows the screen.
 */
const BUSY_TIMEOUT_MS = 50;

/**
 * Read-only connections to opencode databases, one per path, reopened when the file was replaced (a
 * new inode) and closed past MAX_OPEN_DATABASES (least recently opened first) or by `close`.
 */
export class OpencodeConnections {
  private readonly open = new Map<string, { readonly db: Database.Database; readonly ino: number }>();

  /** The connection to the database at `path` whose inode is `ino`. */
  get(path: string, ino: number): Database.Database {
    const current = this.open.get(path);
    if (current && current.ino === ino) return current.db;
    this.forget(path);
    const db = new Database(path, { readonly: true, fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
    this.open.set(path, { db, ino });
    while (this.open.size > MAX_OPEN_DATABASES) {
      const oldest = this.open.keys().next().value;
      if (oldest === undefined) break;
      this.forget(oldest);
    }
    return db;
  }

  /** Closes the connection to `path`, if one is open. */
  forget(path: string): void {
    const current = this.open.get(path);
    if (!current) return;
    this.open.delete(path);
    try {
      current.db.close();
    } catch {
      // Already closed or broken: nothing more to release.
    }
  }

  /** Closes every connection. */
  close(): void {
    for (const path of [...this.open.keys()]) this.forget(path);
  }
}

/**
 * The database's inode and a stamp of its state (the database's and its WAL's size and mtime: any
 * write changes it); undefined when there is no database file.
 */
export async function databaseState(path: string): Promise<{ ino: number; stamp: string } | undefined> {
  const [main, wal] = await Promise.all([
    stat(path).catch(() => undefined),
    stat(`${path}-wal`).catch(() => undefined),
  ]);
  if (!main?.isFile()) return undefined;
  return {
    ino: main.ino,
    stamp: `${main.ino}:${main.size}:${main.mtimeMs}:${wal?.size ?? 0}:${wal?.mtimeMs ?? 0}`,
  };
}
