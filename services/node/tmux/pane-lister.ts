import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { escapeArgument, isNothingToList, type TmuxClient, TmuxError } from "./client.js";
import { listPanes, type PaneInfo, paneFormat, parsePanes } from "./panes.js";

/** Longest one listing may take before the lister's shell is stopped (as for any tmux command). */
export const PANE_LIST_TIMEOUT_MS = 10_000;
/** What a POSIX shell exits with when the command it was given cannot be run, or is not found. */
const SHELL_CANNOT_RUN = 126;
const SHELL_NOT_FOUND = 127;
/** Largest listing read (100 panes print about 30 kB). */
const MAX_LISTING_BYTES = 64 * 1024 * 1024;

/**
 * The lister's shell, a constant: for each line it reads (`<end mark> <format>`, both made afresh for
 * each listing) it runs the tmux client given as its arguments with that format as the last one, and
 * prints the end mark and tmux's exit status after its output. Nothing read is ever parsed as shell
 * code: the line's two words are expanded as single arguments.
 */
const LISTER_SCRIPT = `while IFS=' ' read -r mark format; do
  "$0" "$@" "$format" 2>&1
  printf '\\n%s %s\\n' "$mark" "$?"
done`;

interface Listing {
  readonly end: Buffer;
  readonly resolve: (output: string) => void;
  readonly reject: (err: Error) => void;
  readonly timer: NodeJS.Timeout;
}

/**
 * Lists every pane (`list-panes -a`, as `listPanes`) through one long-lived `sh` that starts the tmux
 * client, instead of a process spawned from this one for each listing. Node.js spawns by forking its
 * own process and waiting on its one thread until the child has exec'd: a measured 6 to 14 ms each on
 * the 2-core test machine, every WATCH_IDLE_INTERVAL_MS, for as long as anyone watches. The shell forks
 * itself (about a megabyte) instead, and this process only writes a line and reads the answer.
 * tmux sees the same client with the same arguments and environment; each listing still has a format
 * with a nonce of its own. One listing runs at a time; a listing that takes longer than
 * PANE_LIST_TIMEOUT_MS stops the shell (the next listing starts another), and a shell that cannot be
 * started leaves the listing to `listPanes`.
 */
export class PaneLister {
  private shell: ChildProcessWithoutNullStreams | undefined;
  private received: Buffer[] = [];
  private receivedBytes = 0;
  private current: Listing | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;
  /** True once a shell could not be started: listings spawn tmux directly from then on. */
  private unavailable = false;

  constructor(
    private readonly tmux: TmuxClient,
    private readonly timeoutMs = PANE_LIST_TIMEOUT_MS,
  ) {}

  /** Every pane of every session on the client's server ([] when no server runs). */
  list(): Promise<PaneInfo[]> {
    const listing = this.queue.then(() => this.listOnce());
    this.queue = listing.catch(() => undefined);
    return listing;
  }

  /** The running shell's process id, if one runs (for diagnostics and tests). */
  get shellPid(): number | undefined {
    return this.shell?.pid;
  }

  /** Stops the shell; later listings spawn tmux directly. */
  close(): void {
    this.closed = true;
    this.stopShell(new TmuxError("tmux list-panes failed: the pane lister was closed", "", null));
  }

  private async listOnce(): Promise<PaneInfo[]> {
    if (this.closed || this.unavailable) return listPanes(this.tmux);
    const shell = this.shell ?? this.startShell();
    if (!shell) return listPanes(this.tmux);
    const format = paneFormat();
    const mark = randomBytes(8).toString("hex");
    const output = new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.stopShell(
          new TmuxError(`tmux list-panes took longer than ${this.timeoutMs} ms and was stopped`, "", null),
        );
      }, this.timeoutMs);
      this.current = { end: Buffer.from(`\n${mark} `), resolve, reject, timer };
      shell.stdin.write(`${mark} ${escapeArgument(format.format)}\n`);
    });
    try {
      return parsePanes(await output, format);
    } catch (err) {
      // No `sh` to run here: this listing too is spawned directly.
      if (this.unavailable) return listPanes(this.tmux);
      throw err;
    }
  }

  private startShell(): ChildProcessWithoutNullStreams | undefined {
    const args = this.tmux.argv(["list-panes", "-a", "-F"]);
    let shell: ChildProcessWithoutNullStreams;
    try {
      shell = spawn("sh", ["-c", LISTER_SCRIPT, this.tmux.tmuxPath, ...args], {
        env: this.tmux.environment,
        stdio: ["pipe", "pipe", "pipe"],
      });
    } catch {
      this.unavailable = true;
      return undefined;
    }
    this.shell = shell;
    this.received = [];
    this.receivedBytes = 0;
    shell.on("error", () => {
      // `sh` could not be started (or a write failed): tmux is spawned directly from now on.
      if (shell.pid === undefined) this.unavailable = true;
      this.ended(shell, new TmuxError("tmux list-panes failed: the pane lister's shell could not run", "", null));
    });
    shell.on("exit", (code, signal) => {
      this.ended(shell, new TmuxError(`tmux list-panes failed: its shell ended (${signal ?? code})`, "", code));
    });
    shell.stdin.on("error", () => {});
    shell.stdout.on("data", (chunk: Buffer) => this.onOutput(shell, chunk));
    shell.stderr.resume();
    // A Hub or Node that is otherwise done does not wait for its lister.
    shell.unref();
    for (const stream of [shell.stdin, shell.stdout, shell.stderr])
      (stream as unknown as { unref?: () => void }).unref?.();
    return shell;
  }

  private onOutput(shell: ChildProcessWithoutNullStreams, chunk: Buffer): void {
    if (shell !== this.shell) return;
    this.received.push(chunk);
    this.receivedBytes += chunk.length;
    const listing = this.current;
    if (!listing) return;
    if (this.receivedBytes > MAX_LISTING_BYTES) {
      this.stopShell(new TmuxError("tmux list-panes failed: its output passed the limit", "", null));
      return;
    }
    const text = Buffer.concat(this.received);
    const at = text.indexOf(listing.end);
    if (at < 0) return;
    const close = text.indexOf("\n", at + listing.end.length);
    if (close < 0) return;
    const code = Number(text.subarray(at + listing.end.length, close).toString("utf8"));
    const output = text.subarray(0, at).toString("utf8");
    this.received = [text.subarray(close + 1)];
    this.receivedBytes = this.received[0]?.length ?? 0;
    this.current = undefined;
    clearTimeout(listing.timer);
    if (code === 0) listing.resolve(output);
    // tmux's own words are its output here (stderr joined it): no server is nothing to list.
    else if (isNothingToList(output)) listing.resolve("");
    // The shell's "not found" (or "permission denied"): the tmux binary itself cannot be run.
    else if (code === SHELL_CANNOT_RUN || code === SHELL_NOT_FOUND)
      listing.reject(new TmuxError(`cannot run ${this.tmux.tmuxPath}: ${output.trim()}`, output.trim(), null));
    else listing.reject(new TmuxError(`tmux list-panes failed: ${output.trim()}`, output.trim(), code));
  }

  private stopShell(why: TmuxError): void {
    const shell = this.shell;
    if (shell) {
      shell.kill("SIGKILL");
      this.ended(shell, why);
    }
  }

  /** The shell is gone: the listing in progress fails with `why`, and the next one starts another. */
  private ended(shell: ChildProcessWithoutNullStreams, why: TmuxError): void {
    if (shell !== this.shell) return;
    this.shell = undefined;
    const listing = this.current;
    this.current = undefined;
    if (listing) {
      clearTimeout(listing.timer);
      listing.reject(why);
    }
  }
}
