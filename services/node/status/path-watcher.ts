import { type FSWatcher, watch } from "node:fs";
import { stat } from "node:fs/promises";
import { dirname, join } from "node:path";

/**
 * Folders climbed from a path that does not exist yet to find one to watch (a Codex day folder
 * `sessions/YYYY/MM/DD` may be three levels from the nearest existing one); higher is not watched.
 */
const MAX_ANCESTOR_LEVELS = 4;
/** Paths watched at once: far above 100 sessions × a few paths, far below the inotify watch limit. */
const MAX_WATCHED_PATHS = 4_096;

interface Watch {
  /** What is really watched: the path, or its nearest existing ancestor while it does not exist. */
  readonly target: string;
  readonly watcher: FSWatcher;
}

/**
 * Watches native state files and folders (inotify through `fs.watch`) so the watch loop wakes as soon
 * as a CLI writes, instead of finding the change at its next poll. A path that does not exist yet is
 * watched through its nearest existing folder; a watch whose file was replaced (renamed over, deleted)
 * is dropped and re-armed by the next `set`. It only wakes: a missed or failed watch makes a change
 * late, never lost, because the poll still looks.
 */
export class PathWatcher {
  private readonly watches = new Map<string, Watch>();
  private closed = false;

  /**
   * `onChange(path, file)` is called with the wanted path (as given to `set`) whose watch fired, and,
   * when that path is a folder, the file in it the event names (undefined when it names none, and for
   * a file's own watch or a watch on an ancestor standing in for a path not made yet).
   */
  constructor(private readonly onChange: (path: string, file?: string) => void) {}

  /** The paths watched now (as given to `set`). */
  get paths(): ReadonlySet<string> {
    return new Set(this.watches.keys());
  }

  /** True when `path` itself is watched now (not an ancestor standing in for it while it does not exist). */
  covers(path: string): boolean {
    return this.watches.get(path)?.target === path;
  }

  /**
   * Watches exactly `paths` from now on: new ones are armed, gone ones closed. Returns the paths armed
   * by this call (their earlier changes were not watched: the caller should look at them once more).
   */
  async set(paths: Iterable<string>): Promise<string[]> {
    const wanted = new Set(paths);
    for (const [path, w] of this.watches) {
      if (!wanted.has(path)) {
        w.watcher.close();
        this.watches.delete(path);
      }
    }
    const armed: string[] = [];
    for (const path of wanted) {
      if (this.closed || this.watches.size >= MAX_WATCHED_PATHS) break;
      const current = this.watches.get(path);
      if (current && current.target === path) continue;
      const target = await nearestExisting(path);
      if (target === undefined || (current && current.target === target)) continue;
      current?.watcher.close();
      this.watches.delete(path);
      const watcher = this.arm(path, target);
      if (watcher) {
        this.watches.set(path, { target, watcher });
        armed.push(path);
      }
    }
    return armed;
  }

  /** Closes every watch; `set` does nothing afterwards. */
  close(): void {
    this.closed = true;
    for (const w of this.watches.values()) w.watcher.close();
    this.watches.clear();
  }

  private arm(path: string, target: string): FSWatcher | undefined {
    let watcher: FSWatcher;
    try {
      watcher = watch(target, { persistent: false });
    } catch {
      // Unwatchable (permissions, inotify limit): the poll still finds the change.
      return undefined;
    }
    const drop = () => {
      if (this.watches.get(path)?.watcher === watcher) this.watches.delete(path);
      watcher.close();
    };
    watcher.on("change", (type, name) => {
      const named = name === null ? undefined : String(name);
      // A rename of the watched file itself (replaced or deleted) ends what this watch can see.
      if (type === "rename" && target === path && (named === undefined || named === basenameOf(path))) drop();
      const inFolder = target === path && named !== undefined && named !== basenameOf(path);
      this.onChange(path, inFolder ? join(path, named) : undefined);
    });
    watcher.on("error", () => {
      drop();
      this.onChange(path);
    });
    return watcher;
  }
}

function basenameOf(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

/** `path` when it exists, else its nearest existing ancestor within MAX_ANCESTOR_LEVELS. */
async function nearestExisting(path: string): Promise<string | undefined> {
  let candidate = path;
  for (let level = 0; level <= MAX_ANCESTOR_LEVELS; level++) {
    if (
      await stat(candidate).then(
        () => true,
        () => false,
      )
    )
      return candidate;
    const parent = dirname(candidate);
    if (parent === candidate) return undefined;
    candidate = parent;
  }
  return undefined;
}
