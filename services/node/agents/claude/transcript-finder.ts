import { readdir, realpath, stat } from "node:fs/promises";
import { join } from "node:path";

/** Longest transcript folder name before Claude Code cuts it and appends a hash (2.1.x). */
const MAX_PROJECT_DIR_CHARS = 200;

/** The transcript folder name for a start cwd: every character outside [A-Za-z0-9] becomes `-`. */
export function encodeProjectDir(cwd: string): string {
  return cwd.replace(/[^A-Za-z0-9]/g, "-");
}

/** A transcript file and its newest write. */
export interface TranscriptFile {
  readonly path: string;
  readonly mtimeMs: number;
}

/**
 * Finds where a Claude Code process's transcripts are: `projects/<enc(start cwd)>/`, and in it the
 * session transcripts (`<sessionId>.jsonl`, never a subagent's `agent-*.jsonl`) written since a time.
 */
export class TranscriptFinder {
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

  /** The session transcripts in `dir` last written at or after `sinceMs`. */
  async writtenSince(dir: string, sinceMs: number): Promise<TranscriptFile[]> {
    const names = await readdir(dir).catch(() => [] as string[]);
    const out: TranscriptFile[] = [];
    await Promise.all(
      names.map(async (name) => {
        if (!name.endsWith(".jsonl") || name.startsWith("agent-")) return;
        const path = join(dir, name);
        const info = await stat(path).catch(() => undefined);
        if (info?.isFile() && info.mtimeMs >= sinceMs) out.push({ path, mtimeMs: info.mtimeMs });
      }),
    );
    return out;
  }
}
