import { open, readdir, realpath, stat } from "node:fs/promises";
import { join } from "node:path";
import Database from "better-sqlite3";
import { BoundedMap } from "../../../common/bounded-map.js";

/** Days of rollout folders searched back from today (bounded even for a process started long ago). */
const MAX_ROLLOUT_DAYS = 8;
/** Bytes read from a rollout's start to find its `session_meta` cwd (the record may be long). */
const SESSION_META_BYTES = 64 * 1024;
/** Rollout cwds remembered (a rollout's cwd never changes). */
const MAX_CACHED_CWDS = 4096;
/** How long a thread index read waits for Codex's lock before the day folders answer alone. */
const INDEX_BUSY_TIMEOUT_MS = 50;
/** Day folders walked looking for a resumed thread's rollout (about a year of daily use). */
const MAX_SCANNED_DAY_FOLDERS = 400;

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

/** A rollout file and its newest write. */
export interface RolloutFile {
  readonly path: string;
  readonly mtimeMs: number;
}

/**
 * Finds the rollouts a Codex pane may be writing: those in the folders of the days since the process
 * started whose `session_meta.cwd` is the pane's cwd and that were written since; for `codex resume`,
 * also older ones (from Codex's thread index). The TUI's turn may run in a daemon outside the pane, so
 * open file descriptors cannot be used: cwd, time and the prompts on screen are what match.
 */
export class RolloutFinder {
  private readonly cwds = new BoundedMap<string, string>(MAX_CACHED_CWDS);
  private readonly byId = new BoundedMap<string, string>(MAX_CACHED_CWDS);
  /** The rollouts of a cwd, listed again only when a day folder changes (a rollout is created). */
  private readonly listings = new BoundedMap<string, { stamp: string; paths: readonly string[] }>(MAX_CACHED_CWDS);

  /** Rollouts of `cwd` written at or after `since` (slack included by the caller). */
  async writtenSince(codexHome: string, cwd: string, since: Date, resumed: boolean): Promise<RolloutFile[]> {
    const sinceMs = since.getTime();
    const folders = rolloutFolders(codexHome, since);
    const stamp = (
      await Promise.all(
        folders.map((f) =>
          stat(f).then(
            (s) => `${s.ino}:${s.mtimeMs}`,
            () => "-",
          ),
        ),
      )
    ).join("|");
    const key = `${codexHome}\0${cwd}\0${folders[folders.length - 1] ?? ""}`;
    let paths = this.listings.get(key)?.stamp === stamp ? this.listings.get(key)?.paths : undefined;
    if (!paths) {
      const listed = await this.listFolders(folders, cwd);
      paths = listed.paths;
      // A rollout whose first line was not readable yet is looked at again next time.
      this.listings.set(key, { stamp: listed.complete ? stamp : "", paths });
    }
    const all = new Set(paths);
    // A resumed thread keeps writing its old rollout, which may lie in an older day's folder.
    if (resumed) {
      const wanted = [cwd, await realpath(cwd).catch(() => cwd)];
      for (const path of await indexedRollouts(codexHome, wanted, sinceMs)) all.add(path);
    }
    const out: RolloutFile[] = [];
    for (const path of all) {
      const info = await stat(path).catch(() => undefined);
      if (info?.isFile() && info.mtimeMs >= sinceMs) out.push({ path, mtimeMs: info.mtimeMs });
    }
    return out;
  }

  /** The rollouts in `folders` whose `session_meta.cwd` is `cwd`. */
  private async listFolders(folders: readonly string[], cwd: string): Promise<{ paths: string[]; complete: boolean }> {
    const wanted = new Set([cwd, await realpath(cwd).catch(() => cwd)]);
    const paths: string[] = [];
    let complete = true;
    for (const folder of folders) {
      const names = await readdir(folder).catch(() => [] as string[]);
      for (const name of names) {
        if (!name.startsWith("rollout-") || !name.endsWith(".jsonl")) continue;
        const path = join(folder, name);
        const rolloutCwd = await this.rolloutCwd(path);
        if (rolloutCwd === "") complete = false;
        if (wanted.has(rolloutCwd)) paths.push(path);
      }
    }
    return { paths, complete };
  }

  /** The rollout of thread `id` (`codex resume <id>`), or undefined when not found. */
  async byThreadId(codexHome: string, id: string): Promise<string | undefined> {
    const key = `${codexHome}\0${id}`;
    const cached = this.byId.get(key);
    if (cached !== undefined) return cached;
    const found = (await indexedRollout(codexHome, id)) ?? (await scanForThread(codexHome, id));
    if (found) {
      this.byId.set(key, found);
    }
    return found;
  }

  /** The cwd in a rollout's `session_meta` ("" when unreadable). */
  async rolloutCwd(path: string): Promise<string> {
    const cached = this.cwds.get(path);
    if (cached !== undefined) return cached;
    const cwd = await readSessionMetaCwd(path);
    // A rollout caught before its first line is complete is asked again next time.
    if (cwd === "") return cwd;
    this.cwds.set(path, cwd);
    return cwd;
  }
}

/** The thread index databases of a Codex home (`state_<n>.sqlite`, newest schema first). */
async function threadIndexes(codexHome: string): Promise<string[]> {
  const names = await readdir(codexHome).catch(() => [] as string[]);
  return names
    .filter((n) => /^state_\d+\.sqlite$/.test(n))
    .sort((a, b) => Number(b.slice(6, -7)) - Number(a.slice(6, -7)))
    .map((n) => join(codexHome, n));
}

/** Runs `query` on each thread index read-only; an index that cannot be read is skipped. */
async function queryIndexes<T>(codexHome: string, query: (db: Database.Database) => T[]): Promise<T[]> {
  const out: T[] = [];
  for (const path of await threadIndexes(codexHome)) {
    let db: Database.Database | undefined;
    try {
      db = new Database(path, { readonly: true, fileMustExist: true, timeout: INDEX_BUSY_TIMEOUT_MS });
      out.push(...query(db));
    } catch {
      // Another schema, locked, or being replaced: the day folders still answer.
    } finally {
      db?.close();
    }
  }
  return out;
}

/** Rollouts of threads in `cwds` updated since `sinceMs`, from Codex's thread index (0.17x). */
function indexedRollouts(codexHome: string, cwds: readonly string[], sinceMs: number): Promise<string[]> {
  return queryIndexes(codexHome, (db) =>
    (
      db
        .prepare(
          `SELECT rollout_path FROM threads WHERE cwd IN (${cwds.map(() => "?").join(", ")}) AND updated_at_ms >= ?`,
        )
        .all(...cwds, sinceMs) as { rollout_path: unknown }[]
    )
      .map((r) => r.rollout_path)
      .filter((p): p is string => typeof p === "string" && p.startsWith(join(codexHome, "sessions"))),
  );
}

async function indexedRollout(codexHome: string, id: string): Promise<string | undefined> {
  const found = await queryIndexes(codexHome, (db) =>
    (db.prepare("SELECT rollout_path FROM threads WHERE id = ?").all(id) as { rollout_path: unknown }[])
      .map((r) => r.rollout_path)
      .filter((p): p is string => typeof p === "string" && p.startsWith(join(codexHome, "sessions"))),
  );
  return found[0];
}

/** Walks the day folders newest first for `rollout-…-<id>.jsonl` (bounded). */
async function scanForThread(codexHome: string, id: string): Promise<string | undefined> {
  const suffix = `-${id}.jsonl`;
  const sessions = join(codexHome, "sessions");
  const desc = async (dir: string) => (await readdir(dir).catch(() => [] as string[])).sort().reverse();
  let folders = 0;
  for (const year of await desc(sessions)) {
    for (const month of await desc(join(sessions, year))) {
      for (const day of await desc(join(sessions, year, month))) {
        if (++folders > MAX_SCANNED_DAY_FOLDERS) return undefined;
        const folder = join(sessions, year, month, day);
        const name = (await readdir(folder).catch(() => [] as string[])).find((n) => n.endsWith(suffix));
        if (name) return join(folder, name);
      }
    }
  }
  return undefined;
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
