import { CommandShell, ShellRunError } from "../../common/command-shell.js";
import { isNothingToList, type TmuxArgument, type TmuxClient, TmuxError, type TmuxResult } from "./client.js";
import { listPanes, type PaneInfo, paneFormat, parsePanes } from "./panes.js";

/** Longest one listing may take before it is stopped (as for any tmux command). */
export const PANE_LIST_TIMEOUT_MS = 10_000;
/** Largest listing read (100 panes print about 30 kB). */
const MAX_LISTING_BYTES = 64 * 1024 * 1024;
/** What a POSIX shell exits with when the command it was given cannot be run, or is not found. */
const SHELL_CANNOT_RUN = 126;
const SHELL_NOT_FOUND = 127;

/**
 * Lists every pane (`list-panes -a`, as `listPanes`) through a CommandShell, a long-lived `sh` that
 * starts the tmux client, instead of a process spawned from this one for each listing: the watch loop
 * lists every WATCH_IDLE_INTERVAL_MS for as long as anyone watches, and each spawn held the server's
 * one thread (docs/status.md, "The pane lister"). tmux sees the same client with the same arguments
 * and environment; each listing still has a format with a nonce of its own. Where no `sh` can be
 * started, or once closed, listings spawn tmux directly.
 */
export class PaneLister {
  private readonly shell: CommandShell;

  constructor(
    private readonly tmux: TmuxClient,
    private readonly timeoutMs = PANE_LIST_TIMEOUT_MS,
  ) {
    this.shell = new CommandShell(tmux.environment);
  }

  /** The running shell's process id, if one runs (for diagnostics and tests). */
  get shellPid(): number | undefined {
    return this.shell.pid;
  }

  /** Every pane of every session on the client's server ([] when no server runs). */
  async list(): Promise<PaneInfo[]> {
    const format = paneFormat();
    const argv = [this.tmux.tmuxPath, ...this.tmux.argv(["list-panes", "-a", "-F", format.format])];
    if (!this.shell.canRun(argv)) return listPanes(this.tmux);
    let result: Awaited<ReturnType<CommandShell["run"]>>;
    try {
      result = await this.shell.run(argv, { timeoutMs: this.timeoutMs, maxBytes: MAX_LISTING_BYTES });
    } catch (err) {
      // No `sh` to run here (found out just now): this listing too is spawned directly.
      if (!this.shell.canRun(argv)) return listPanes(this.tmux);
      const why =
        err instanceof ShellRunError && err.reason === "timeout"
          ? err.message
          : `failed: ${err instanceof Error ? err.message : String(err)}`;
      throw new TmuxError(`tmux list-panes ${why}`, "", null);
    }
    const stderr = result.stderr.trim();
    if (result.code === 0 || result.truncated) return parsePanes(result.stdout.toString("utf8"), format);
    if (isNothingToList(stderr)) return [];
    if (result.code === SHELL_CANNOT_RUN || result.code === SHELL_NOT_FOUND)
      throw new TmuxError(`cannot run ${this.tmux.tmuxPath}: ${stderr}`, stderr, null);
    throw new TmuxError(`tmux list-panes failed: ${stderr}`, stderr, result.code);
  }

  /**
   * Runs any other tmux invocation of the watch loop (`capturePanes`' captures) through the same shell,
   * answering as `TmuxClient.exec` does; spawned directly where the shell cannot take it.
   */
  async exec(args: readonly TmuxArgument[]): Promise<TmuxResult> {
    const argv = [this.tmux.tmuxPath, ...this.tmux.argv(args)];
    if (!this.shell.canRun(argv)) return this.tmux.exec(args);
    let result: Awaited<ReturnType<CommandShell["run"]>>;
    try {
      result = await this.shell.run(argv, { timeoutMs: this.timeoutMs, maxBytes: MAX_LISTING_BYTES });
    } catch (err) {
      if (!this.shell.canRun(argv)) return this.tmux.exec(args);
      throw new TmuxError(`tmux failed: ${err instanceof Error ? err.message : String(err)}`, "", null);
    }
    const stderr = result.stderr.trim();
    if (result.code === SHELL_CANNOT_RUN || result.code === SHELL_NOT_FOUND)
      throw new TmuxError(`cannot run ${this.tmux.tmuxPath}: ${stderr}`, stderr, null);
    return { stdout: result.stdout.toString("utf8"), stderr, code: result.code, signal: null };
  }

  /** Stops the shell; later listings spawn tmux directly. */
  close(): void {
    this.shell.close();
  }
}
