import { readdir, readFile, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";

/** A session folder's lock file, named by the pid of the process that has the session open. */
const LOCK_FILE = /^inuse\.(\d+)\.lock$/;
/** The `cwd:` line of a session's `workspace.yaml`. */
const CWD_LINE = /^cwd:\s*(.*?)\s*$/m;
/** Sessions looked at per read, newest first: a machine keeps every past session's folder. */
const MAX_SESSION_FOLDERS = 200;

/** Copilot CLI's state folder: `$COPILOT_HOME`, else `~/.copilot` (docs/status.md, "Copilot CLI"). */
export function copilotHome(env: Readonly<Record<string, string | undefined>>): string {
  const set = env.COPILOT_HOME;
  if (set) return set;
  return join(env.HOME || homedir(), ".copilot");
}

/** Where Copilot CLI keeps one folder per session (`<id>/events.jsonl`, `workspace.yaml`, locks). */
export function sessionStateFolder(home: string): string {
  return join(home, "session-state");
}

/** One session of Copilot CLI in the folder a pane runs in. */
export interface CopilotSessionFile {
  /** The session's `events.jsonl` (it may not exist yet: it is written from the first prompt). */
  readonly path: string;
  readonly id: string;
  readonly mtimeMs: number;
  /** The pids named by the session's `inuse.<pid>.lock` files (the processes that have it open). */
  readonly pids: readonly number[];
}

/**
 * The sessions whose `workspace.yaml` names `cwd` and that were written since `sinceMs`, newest first:
 * a session is a folder `session-state/<id>/`; its `inuse.<pid>.lock` names the process running it.
 */
export async function copilotSessions(home: string, cwd: string, sinceMs: number): Promise<CopilotSessionFile[]> {
  const root = sessionStateFolder(home);
  let names: string[];
  try {
    names = await readdir(root);
  } catch {
    return [];
  }
  const folders = await Promise.all(
    names.map(async (id) => {
      const dir = join(root, id);
      const info = await stat(dir).catch(() => undefined);
      return info?.isDirectory() ? { id, dir, mtimeMs: info.mtimeMs } : undefined;
    }),
  );
  const recent = folders
    .filter((f) => f !== undefined && f.mtimeMs >= sinceMs)
    .sort((a, b) => (b?.mtimeMs ?? 0) - (a?.mtimeMs ?? 0))
    .slice(0, MAX_SESSION_FOLDERS);
  const sessions = await Promise.all(
    recent.map(async (folder) => {
      if (!folder) return undefined;
      const workspace = await readFile(join(folder.dir, "workspace.yaml"), "utf8").catch(() => "");
      if (unquoted(CWD_LINE.exec(workspace)?.[1] ?? "") !== cwd) return undefined;
      const entries = await readdir(folder.dir).catch(() => [] as string[]);
      const pids = entries.map((e) => Number(LOCK_FILE.exec(e)?.[1] ?? 0)).filter((p) => p > 0);
      const path = join(folder.dir, "events.jsonl");
      const events = await stat(path).catch(() => undefined);
      const mtimeMs = Math.max(folder.mtimeMs, events?.mtimeMs ?? 0);
      return { path, id: folder.id, mtimeMs, pids } satisfies CopilotSessionFile;
    }),
  );
  return sessions.filter((s) => s !== undefined);
}

/** A YAML scalar as written: plain, or in double or single quotes (a path with special characters). */
function unquoted(value: string): string {
  if (value.length >= 2 && value.startsWith("'") && value.endsWith("'"))
    return value.slice(1, -1).replaceAll("''", "'");
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
    try {
      return JSON.parse(value) as string;
    } catch {
      return value.slice(1, -1);
    }
  }
  return value;
}
