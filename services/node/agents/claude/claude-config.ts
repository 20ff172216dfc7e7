import { join } from "node:path";

/** The config folder of a Claude Code process: `$CLAUDE_CONFIG_DIR`, else `$HOME/.claude`. */
export function claudeConfigDir(env: Readonly<Record<string, string | undefined>>): string {
  return env.CLAUDE_CONFIG_DIR || join(env.HOME || "/", ".claude");
}
