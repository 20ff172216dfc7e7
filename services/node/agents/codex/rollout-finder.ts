import { open, readdir, realpath, stat } from "node:fs/promises";
import { join } from "node:path";
import { FileBinder } from "../file-binder.js";

/** Days of rollout folders searched back from today (bounded even for a process started long ago). */
const MAX_ROLLOUT_DAYS = 8;
/** Bytes read from a rollout's start to find its `session_meta` cwd (the record may be long). */
const SESSION_META_BYTES = 64 * 1024;
/** Rollout cwds remembered (a rollout's cwd never changes). */
const MAX_CACHED_CWDS = 4096;

function pad2(n: number): string {
  return String(n).padStart(2, "0");
}

/** `sessions/YYYY/MM/DD` folders (local dates) from `since` to `now`, newest first. */
export function rolloutFolders(codexHome: string, since: Date, now = new Date()): string[] {
  const out: string[] = [];
  const day = new Date(now.getFullYear(), now.getMonth(), now.getDate());
  const first = new Date(since.getFullYear(), since.getMonth(), since.getDate());
  while (day >= first && out.length < MAX_ROLLOUT_DAYS) {
    out.push(join(codexHome, "sessions", String(day.getFullYear()), pad2(day.getMonth() + 1), pad2(day.getDate())));
    day.setDate(day.getDate() - 1);
  }
  return out;
}

/**
 * Finds the rollout of a Codex pane: among the rollouts in the folders of the days since the process
 * started, the newest whose `session_meta.cwd` is the pane's cwd. The TUI's turn may run in a daemon
 * outside the pane, so open file descriptors cannot be used; cwd and time are what match.
 */
export class RolloutFinder {
  private readonly binder = new FileBinder();
  private readonly cwds = new Map<string, string>();

  /** The rollout for the process `key` started at `since` in `cwd`, or undefined. */
  async find(key: string, codexHome: string, cwd: string, since: Date): Promise<string | undefined> {
    const folders = rolloutFolders(codexHome, since);
    const wanted = new Set([cwd, await realpath(cwd).catch(() => cwd)]);
    return this.binder.bind(key, folders, async () => {
      let best: { path: string; mtimeMs: number } | undefined;
      for (const folder of folders) {
        const names = await readdir(folder).catch(() => [] as string[]);
        for (const name of names) {
          if (!name.startsWith("rollout-") || !name.endsWith(".jsonl")) continue;
          const path = join(folder, name);
          const info = await stat(path).catch(() => undefined);
          if (!info?.isFile() || (best && info.mtimeMs <= best.mtimeMs)) continue;
          if (wanted.has(await this.rolloutCwd(path))) best = { path, mtimeMs: info.mtimeMs };
        }
      }
      return best?.path;
    });
  }

  /** The cwd in a rollout's `session_meta` ("" when unreadable). */
  async rolloutCwd(path: string): Promise<string> {
    const cached = this.cwds.get(path);
    if (cached !== undefined) return cached;
    const cwd = await readSessionMetaCwd(path);
    // A rollout caught before its first line is complete is asked again next time.
    if (cwd === "") return cwd;
    this.cwds.set(path, cwd);
    if (this.cwds.size > MAX_CACHED_CWDS) {
      const oldest = this.cwds.keys().next().value;
      if (oldest !== undefined) this.cwds.delete(oldest);
    }
    return cwd;
  }
}

/** Reads `payload.cwd` of the first line when it is a `session_meta` record. */
export async function readSessionMetaCwd(path: string): Promise<string> {
  let head: string;
  try {
    const file = await open(path, "r");
    try {
      const buffer = Buffer.alloc(SESSION_META_BYTES);
      const { bytesRead } = await file.read(buffer, 0, SESSION_META_BYTES, 0);
      head = buffer.subarray(0, bytesRead).toString("utf8");
    } finally {
      await file.close();
    }
  } catch {
    return "";
  }
  const nl = head.indexOf("\n");
  const first = nl >= 0 ? head.slice(0, nl) : head;
  if (!/"type"\s*:\s*"session_meta"/.test(first)) return "";
  // The cwd comes early in the payload; match it in the text so an oversized first line still works.
  const match = /"cwd"\s*:\s*("(?:[^"\\]|\\.)*")/.exec(first);
  if (!match?.[1]) return "";
  try {
    const cwd: unknown = JSON.parse(match[1]);
    return typeof cwd === "string" ? cwd : "";
  } catch {
    return "";
  }
}
