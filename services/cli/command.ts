import type { EnvironmentConfig } from "../common/config.js";

/**
 * What a command module exports: the code of one `staragent` sub-command. In its own file so that the
 * command modules and the table in main.ts that imports them do not import each other.
 */
export interface Command {
  /** Runs the command; returns the exit code. */
  run(args: string[], config: EnvironmentConfig, env: NodeJS.ProcessEnv): Promise<number>;
}
