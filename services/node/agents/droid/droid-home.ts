import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";

/** Factory droid's own folder: `~/.factory` (docs/status.md, "Factory droid"). */
export function factoryHome(env: Readonly<Record<string, string | undefined>>): string {
  return join(env.HOME || "/", ".factory");
}

/** The folder of a cwd's sessions: `sessions/<cwd with every / as ->` (recorded from 0.225.2). */
export function droidSessionsFolder(home: string, cwd: string): string {
  return join(home, "sessions", cwd.replaceAll("/", "-"));
}

/** A session log and its newest write. */
export interface DroidSessionFile {
  readonly path: string;
  /** The session id (the file's name without `.jsonl`), which `droid --resume <id>` takes. */
  readonly id: string;
  readonly mtimeMs: number;
}

/** The session logs (`<sessionId>.jsonl`) of a sessions folder written at or after `sinceMs`. */
export async function droidSessionFiles(folder: string, sinceMs: number): Promise<DroidSessionFile[]> {
  const names = await readdir(folder).catch(() => [] as string[]);
  const found = await Promise.all(
    names
      .filter((n) => n.endsWith(".jsonl"))
      .map(async (name) => {
        const path = join(folder, name);
        const info = await stat(path).catch(() => undefined);
        if (!info?.isFile() || info.mtimeMs < sinceMs) return undefined;
        return { path, id: name.slice(0, -".jsonl".length), mtimeMs: info.mtimeMs } satisfies DroidSessionFile;
      }),
  );
  return found.filter((f) => f !== undefined);
}
