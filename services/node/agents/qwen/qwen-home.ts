import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { parseRecord } from "../log-follower.js";

/** Qwen Code's own folder: `$QWEN_HOME`, else `~/.qwen` (docs/status.md "Qwen Code"). */
export function qwenHome(env: Readonly<Record<string, string | undefined>>): string {
  return env.QWEN_HOME || join(env.HOME || "/", ".qwen");
}

/** The folder of a cwd's sessions: `projects/<cwd, every character but letters and digits as ->/chats`. */
export function qwenChatsFolder(home: string, cwd: string): string {
  return join(home, "projects", cwd.replace(/[^a-zA-Z0-9]/g, "-"), "chats");
}

/** A session log and its newest write. */
export interface QwenSessionFile {
  readonly path: string;
  readonly mtimeMs: number;
  /** The pid its `<sessionId>.runtime.json` names (0 when there is none or it cannot be read). */
  readonly pid: number;
}

/** The session logs (`<sessionId>.jsonl`) of a chats folder written at or after `sinceMs`, with their pids. */
export async function qwenSessionFiles(folder: string, sinceMs: number): Promise<QwenSessionFile[]> {
  const names = await readdir(folder).catch(() => [] as string[]);
  const out: QwenSessionFile[] = [];
  await Promise.all(
    names
      .filter((n) => n.endsWith(".jsonl"))
      .map(async (name) => {
        const path = join(folder, name);
        const info = await stat(path).catch(() => undefined);
        if (!info?.isFile() || info.mtimeMs < sinceMs) return;
        const runtime = parseRecord(
          await readFile(join(folder, `${name.slice(0, -".jsonl".length)}.runtime.json`), "utf8").catch(() => ""),
        );
        const pid = typeof runtime?.pid === "number" && Number.isSafeInteger(runtime.pid) ? runtime.pid : 0;
        out.push({ path, mtimeMs: info.mtimeMs, pid });
      }),
  );
  return out;
}
