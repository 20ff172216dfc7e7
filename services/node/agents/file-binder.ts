import { stat } from "node:fs/promises";

/** Bindings remembered at once (one per CLI process); the oldest is forgotten past this. */
const MAX_BINDINGS = 1024;

/**
 * Remembers which file a CLI process writes, choosing again only when one of the folders it could be
 * in changes (a new file appears): finding a session's log then costs a `stat` per folder, not a
 * listing and a `stat` per file, on every poll.
 */
export class FileBinder {
  private readonly bindings = new Map<string, { stamp: string; path: string | undefined }>();

  /**
   * The file bound to `key` (e.g. a pid and its start time). `choose` runs when there is no binding
   * yet or when one of `folders` was modified since the last choice.
   */
  async bind(key: string, folders: readonly string[], choose: () => Promise<string | undefined>) {
    const stamps = await Promise.all(
      folders.map((f) =>
        stat(f).then(
          (s) => `${s.ino}:${s.mtimeMs}`,
          () => "-",
        ),
      ),
    );
    const stamp = stamps.join("|");
    const cached = this.bindings.get(key);
    if (cached && cached.stamp === stamp) return cached.path;
    const path = await choose();
    this.bindings.delete(key);
    this.bindings.set(key, { stamp, path });
    if (this.bindings.size > MAX_BINDINGS) {
      const oldest = this.bindings.keys().next().value;
      if (oldest !== undefined) this.bindings.delete(oldest);
    }
    return path;
  }
}
