import { SESSION_NAME_PATTERN } from "../../common/resource-names.js";
import { NEXT_COMMAND, sessionTarget, type TmuxClient } from "./client.js";
import { EXIT_STATUS_OPTION, ORIGIN_OPTION } from "./panes.js";

/**
 * Runs the user's argv without any shell interpretation: `sh` receives a constant script and the
 * argv as positional parameters, then execs it. (tmux hands a single-argument command to `sh -c`,
 * which would read it as shell code; this keeps every command an argument array.)
 */
export const EXEC_ARGV_PREFIX = ["/bin/sh", "-c", 'exec "$@"', "staragent-exec"];

/**
 * Runs the user's argv as EXEC_ARGV_PREFIX does (a constant script, the argv as positional
 * parameters), but keeps the pane when it exits: the pane records the exit status in its option
 * EXIT_STATUS_OPTION (the Session's `exit_status`), says so in one line, and becomes a login shell in
 * the same folder, so the session, its terminal and its chat stay after an agent's `/exit`.
 * INT and QUIT are caught as well (not ignored, which the command would inherit), so a Ctrl-C that
 * ends the command never ends the pane with it; a command that suspends itself is resumed at once.
 */
export const KEEP_PANE_SCRIPT = [
  // Job control: the command runs as the terminal's foreground process group of its own, so tmux
  // names it (not this script) as the pane's command, and a Ctrl-C goes to it alone.
  "set -m",
  "trap : INT QUIT",
  // The script's own stderr is put aside while the command runs (the command keeps the pane's): the
  // shell's "Stopped" line must not be drawn over the command's screen.
  "exec 3>&2 2>/dev/null",
  '"$@" 2>&3 3>&-',
  "status=$?",
  // A command that stopped itself (a TUI's Ctrl-Z, which nothing in the pane could ever `fg`) is
  // resumed in the foreground; only its real exit ends it.
  "while kill -0 %1; do fg %1 >/dev/null; status=$?; done",
  "exec 2>&3 3>&-",
  `tmux set-option -p -t "$TMUX_PANE" ${EXIT_STATUS_OPTION} "$status" 2>/dev/null`,
  "trap - INT QUIT",
  'printf \'\\n[%s exited with status %s; this is a login shell in the same folder]\\n\' "$1" "$status"',
  'if [ -n "$SHELL" ]; then exec "$SHELL" -l; fi',
  "exec /bin/sh -l",
].join("\n");

/** The argv prefix running a command under KEEP_PANE_SCRIPT. */
export const KEEP_PANE_ARGV_PREFIX = ["/bin/sh", "-c", KEEP_PANE_SCRIPT, "staragent-run"];

/**
 * True for the process of KEEP_PANE_SCRIPT itself (a pane's root while its command runs below it),
 * also of an earlier version's script: panes outlive an upgrade of StarAgent.
 */
export function isKeepPaneWrapper(process: { readonly argv: readonly string[] }): boolean {
  const [, flag, script, name] = process.argv;
  return name === KEEP_PANE_ARGV_PREFIX[3] && flag === "-c" && (script ?? "").startsWith("set -m\n");
}

/** What `createSession` starts. */
export interface NewSessionOptions {
  readonly name: string;
  readonly cwd: string;
  /** argv; empty starts tmux's default shell. */
  readonly command: readonly string[];
  /** Value of the `@staragent-origin` session option, set in the same tmux invocation. */
  readonly origin: string;
  /**
   * Keep the pane when the command exits (KEEP_PANE_SCRIPT), and keep it dead when the shell it
   * became exits too (`remain-on-exit`: the session is then listed as ended until dismissed);
   * otherwise the session ends with the command.
   */
  readonly keepPane?: boolean;
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
  const prefix = options.keepPane ? KEEP_PANE_ARGV_PREFIX : EXEC_ARGV_PREFIX;
  const argv = options.command.length > 0 ? [...prefix, ...options.command] : [];
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
      ...(options.keepPane
        ? ([NEXT_COMMAND, "set-option", "-w", "-t", `${sessionTarget(options.name)}:`, "remain-on-exit", "on"] as const)
        : []),
    ],
    { cwd: options.cwd },
  );
}

/** Kills a session by exact name. Throws TmuxError (isNotFound) when it does not exist. */
export async function killSession(tmux: TmuxClient, name: string): Promise<void> {
  await tmux.run(["kill-session", "-t", sessionTarget(name)]);
}
