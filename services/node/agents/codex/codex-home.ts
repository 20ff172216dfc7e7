import { join } from "node:path";

/** The Codex home of a process: `$CODEX_HOME`, else `$HOME/.codex`. */
export function codexHome(env: Readonly<Record<string, string | undefined>>): string {
  return env.CODEX_HOME || join(env.HOME || "/", ".codex");
}
