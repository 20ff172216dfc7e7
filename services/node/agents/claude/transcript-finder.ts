import { readdir, realpath, stat } from "node:fs/promises";
import { join } from "node:path";
import { FileBinder } from "../file-binder.js";

/** Longest transcript folder name before Claude Code cuts it and appends a hash (2.1.x). */
const MAX_PROJECT_DIR_CHARS = 200;

/** The transcript folder name for a start cwd: every character outside [A-Za-z0-9] becomes `-`. */
export function encodeProjectDir(cwd: string): string {
  return cwd.replace(/[^A-Za-z0-9]/g, "-");
}

/**
 * Finds the transcript a Claude Code process writes: `projects/<enc>/<sessionId>.jsonl` when the live
 * sessions file names the session, else the newest `*.jsonl` (not a subagent's `agent-*.jsonl`) in
 * the folder of the pane's cwd.
 */
export class TranscriptFinder {
  private readonly binder = new FileBinder();

  /** The project folder for `cwd` under `configDir` (undefined when it does not exist yet). */
  async projectDir(configDir: string, cwd: string): Promise<string | undefined> {
    const resolved = await realpath(cwd).catch(() => cwd);
    const enc = encodeProjectDir(resolved);
    const projects = join(configDir, "projects");
    if (enc.length <= MAX_PROJECT_DIR_CHARS) return join(projects, enc);
    // Long names end in a hash we need not compute: the cut prefix and `-` identify the folder.
    const prefix = `${enc.slice(0, MAX_PROJECT_DIR_CHARS)}-`;
    const names = await readdir(projects).catch(() => [] as string[]);
    const found = names.find((n) => n.startsWith(prefix));
    return found ? join(projects, found) : undefined;
  }

  /** The transcript path for a process (`key` identifies it), or undefined when none is known. */
  async find(key: string, configDir: string, cwd: string, sessionId: string | undefined): Promise<string | undefined> {
    const dir = await this.projectDir(configDir, cwd);
    if (!dir) return undefined;
    if (sessionId) return join(dir, `${sessionId}.jsonl`);
    return this.binder.bind(key, [dir], () => newestTranscript(dir));
  }
}

async function newestTranscript(dir: string): Promise<string | undefined> {
  const names = await readdir(dir).catch(() => [] as string[]);
  let best: { path: string; mtimeMs: number } | undefined;
  for (const name of names) {
    if (!name.endsWith(".jsonl") || name.startsWith("agent-")) continue;
    const path = join(dir, name);
    const info = await stat(path).catch(() => undefined);
    if (info?.isFile() && (!best || info.mtimeMs > best.mtimeMs)) best = { path, mtimeMs: info.mtimeMs };
  }
  return best?.path;
}
