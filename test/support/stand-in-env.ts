import { join } from "node:path";
import { REPO_ROOT } from "./servers.js";

/** The stand-in agent CLIs (test/stand-ins), put first on PATH by `standInEnv`. */
export const STAND_INS = join(REPO_ROOT, "test/stand-ins");

/**
 * The environment a server and its tmux server run the stand-in CLIs in: fast turns, their native
 * state under `home` (the CLIs' own variables cleared so they use it).
 */
export function standInEnv(home: string, turnMs = "200"): NodeJS.ProcessEnv {
  return {
    ...process.env,
    HOME: home,
    PATH: `${STAND_INS}:${process.env.PATH}`,
    STANDIN_THINK_MS: "50",
    STANDIN_TURN_MS: turnMs,
    CLAUDE_CONFIG_DIR: "",
    CODEX_HOME: "",
    XDG_DATA_HOME: "",
  };
}
