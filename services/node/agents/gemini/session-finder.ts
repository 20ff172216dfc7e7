import { readdir, readFile, realpath, stat } from "node:fs/promises";
import { join } from "node:path";
import { parseRecord } from "../log-follower.js";
import { stringField } from "../record-fields.js";

/** The file in each project's folder naming the folder it stands for. */
const PROJECT_ROOT_FILE = ".project_root";
/** Session files of a project's `chats/` folder: `session-<YYYY-MM-DDTHH-MM>-<8 hex of the id>.jsonl`. */
const SESSION_FILE = /^session-.*\.jsonl$/;

/** Gemini CLI's own folder: `$GEMINI_CLI_HOME/.gemini`, else `~/.gemini` (docs/status.md "Gemini CLI"). */
export function geminiHome(env: Readonly<Record<string, string | undefined>>): string {
  return join(env.GEMINI_CLI_HOME || env.HOME || "/", ".gemini");
}

/** A session file and its newest write. */
export interface SessionFile {
  readonly path: string;
  readonly mtimeMs: number;
}

/**
 * The `chats/` folder Gemini CLI writes the sessions of `cwd` into: `tmp/<project>/chats`, where the
 * project's short name comes from `projects.json` (cwd → name), else from the `.project_root` file
 * of a project folder that names `cwd`. Undefined when Gemini CLI has not run there yet.
 */
export async function chatsFolder(home: string, cwd: string): Promise<string | undefined> {
  const wanted = new Set([cwd, await realpath(cwd).catch(() => cwd)]);
  const registry = parseRecord(await readFile(join(home, "projects.json"), "utf8").catch(() => ""));
  const projects = registry?.projects;
  if (projects !== null && typeof projects === "object") {
    for (const path of wanted) {
      const name = stringField(projects as Record<string, unknown>, path);
      if (name !== "" && !name.includes("/")) return join(home, "tmp", name, "chats");
    }
  }
  const tmp = join(home, "tmp");
  for (const name of await readdir(tmp).catch(() => [] as string[])) {
    const owner = (await readFile(join(tmp, name, PROJECT_ROOT_FILE), "utf8").catch(() => "")).trim();
    if (wanted.has(owner)) return join(tmp, name, "chats");
  }
  return undefined;
}

/** The session files of a `chats/` folder written at or after `sinceMs`. */
export async function sessionFiles(folder: string, sinceMs: number): Promise<SessionFile[]> {
  const names = await readdir(folder).catch(() => [] as string[]);
  const out: SessionFile[] = [];
  await Promise.all(
    names
      .filter((n) => SESSION_FILE.test(n))
      .map(async (name) => {
        const path = join(folder, name);
        const info = await stat(path).catch(() => undefined);
        if (info?.isFile() && info.mtimeMs >= sinceMs) out.push({ path, mtimeMs: info.mtimeMs });
      }),
  );
  return out;
}

/** The session file of session `id` (`--resume <id>` names it by its first 8 hex digits). */
export async function sessionFileById(folder: string, id: string): Promise<string | undefined> {
  const short = id.toLowerCase().slice(0, 8);
  if (!/^[0-9a-f]{8}$/.test(short)) return undefined;
  const names = await readdir(folder).catch(() => [] as string[]);
  const name = names.find((n) => SESSION_FILE.test(n) && n.endsWith(`-${short}.jsonl`));
  return name ? join(folder, name) : undefined;
}
