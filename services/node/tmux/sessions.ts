import { SESSION_NAME_PATTERN } from "../../common/resource-names.js";
import { NEXT_COMMAND, sessionTarget, type TmuxClient } from "./client.js";
import { ORIGIN_OPTION } from "./panes.js";

/**
 * Runs the user's argv without any shell interpretation: `sh` receives a constant script and the
 * argv as positional parameters, then execs it. (tmux hands a single-argument command to `sh -c`,
 * which would read it as shell code; this keeps every command an argument array.)
 */
export const EXEC_ARGV_PREFIX = ["/bin/sh", "-c", 'exec "$@"', "staragent-exec"];

/** What `createSession` starts. */
export interface NewSessionOptions {
  readonly name: string;
  readonly cwd: string;
  /** argv; empty starts tmux's default shell. */
  readonly command: readonly string[];
  /** Value of the `@staragent-origin` session option, set in the same tmux invocation. */
  readonly origin: string;
  /** Initial window size. */
  readonly cols?: number;
  readonly rows?: number;
}

/**
 * Creates a detached session and marks its origin, in one tmux invocation so no observer sees the
 * session unmarked. Throws TmuxError (with "duplicate session" in stderr when the name is taken).
 *
 * The directory is the tmux client's own working directory, never `-c`: tmux expands `-c` as a format
 * (a folder named `#(cmd)` would run `cmd`, one named `#{pid}` would start elsewhere, and `##[`
 * cannot even be escaped), while a process's working directory is just a path. The name is also
 * expanded by tmux (`-s`), so only names of SESSION_NAME_PATTERN, which hold no `#`, are accepted.
 */
export async function newSession(tmux: TmuxClient, options: NewSessionOptions): Promise<void> {
  if (!SESSION_NAME_PATTERN.test(options.name))
    throw new Error(`not a session name StarAgent creates: ${options.name}`);
  const size = options.cols && options.rows ? ["-x", String(options.cols), "-y", String(options.rows)] : [];
  const argv = options.command.length > 0 ? [...EXEC_ARGV_PREFIX, ...options.command] : [];
  await tmux.run(
    [
      "new-session",
      "-d",
      "-s",
      options.name,
      ...size,
      ...(argv.length > 0 ? ["--", ...argv] : []),
      NEXT_COMMAND,
      "set-option",
      "-t",
      `${sessionTarget(options.name)}:`,
      ORIGIN_OPTION,
      options.origin,
    ],
    { cwd: options.cwd },
  );
}

/** Kills a session by exact name. Throws TmuxError (isNotFound) when it does not exist. */
export async function killSession(tmux: TmuxClient, name: string): Promise<void> {
  await tmux.run(["kill-session", "-t", sessionTarget(name)]);
}
