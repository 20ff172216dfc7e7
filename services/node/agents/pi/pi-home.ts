import { readdir, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";

/** A session file's name: the time the CLI started it and the session's id (`<ISO time>_<uuid>.jsonl`). */
const SESSION_FILE = /^(\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z)_([0-9a-f-]{36})\.jsonl$/;
/** Session files looked at per read, newest first: a folder keeps every past session of pi there. */
const MAX_SESSION_FILES = 200;

/** pi's state folder: `$PI_CODING_AGENT_DIR`, else `~/.pi/agent` (docs/status.md, "pi"). */
export function piAgentDir(env: Readonly<Record<string, string | undefined>>): string {
  const set = env.PI_CODING_AGENT_DIR;
  if (set) return set;
  return join(env.HOME || homedir(), ".pi", "agent");
}

/** Where pi keeps the sessions of one working folder: `sessions/--<cwd, / and : as ->--/`. */
export function piSessionsFolder(agentDir: string, cwd: string): string {
  return join(agentDir, "sessions", `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`);
}

/** One pi session file of a folder. */
export interface PiSessionFile {
  readonly path: string;
  readonly id: string;
  /** When the CLI started the session (from the file name), ms since the epoch. */
  readonly startedMs: number;
  readonly mtimeMs: number;
}

/**
 * The session files of `folder` written since `sinceMs`, newest first. pi names each by the time its
 * process started the session and the session's id, and writes it only once the first reply arrived.
 */
export async function piSessionFiles(folder: string, sinceMs: number): Promise<PiSessionFile[]> {
  const names = await readdir(folder).catch(() => [] as string[]);
  const files = await Promise.all(
    names.map(async (name) => {
      const match = SESSION_FILE.exec(name);
      if (!match) return undefined;
      const path = join(folder, name);
      const info = await stat(path).catch(() => undefined);
      if (!info?.isFile() || info.mtimeMs < sinceMs) return undefined;
      const iso = (match[1] ?? "").replace(/T(\d{2})-(\d{2})-(\d{2})-(\d{3})Z$/, "T$1:$2:$3.$4Z");
      return { path, id: match[2] ?? "", startedMs: Date.parse(iso) || 0, mtimeMs: info.mtimeMs };
    }),
  );
  return files
    .filter((f) => f !== undefined)
    .sort((a, b) => b.mtimeMs - a.mtimeMs)
    .slice(0, MAX_SESSION_FILES);
}

/** The session file of `id` (or of an id it starts, as `pi --session <partial id>` takes) in `folder`. */
export async function piSessionById(folder: string, id: string): Promise<string | undefined> {
  if (id === "") return undefined;
  if (id.endsWith(".jsonl")) return id.startsWith("/") ? id : join(folder, id);
  const names = await readdir(folder).catch(() => [] as string[]);
  const name = names.find((n) => SESSION_FILE.exec(n)?.[2]?.startsWith(id));
  return name ? join(folder, name) : undefined;
}
