import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";

/**
 * The shell's script, a constant: for each request it reads an end mark, a count and that many
 * arguments (a line each), runs those arguments as a command (stdin from /dev/null), then prints the
 * mark and the command's exit status after its output, and the mark after its error output. Nothing
 * read is ever parsed as shell code: each line is one argument, expanded as one word.
 */
const SCRIPT = `while IFS= read -r mark && IFS= read -r count; do
  set --
  while [ "$#" -lt "$count" ]; do IFS= read -r arg || exit 0; set -- "$@" "$arg"; done
  "$@" </dev/null
  printf '\\n%s %s\\n' "$mark" "$?"
  printf '\\n%s\\n' "$mark" >&2
done`;

/** True when `argv` (a process's, from /proc) is a CommandShell's: how leak checks tell it from a stray child. */
export function isCommandShell(argv: readonly string[]): boolean {
  return argv.length === 3 && argv[0] === "sh" && argv[1] === "-c" && argv[2] === SCRIPT;
}

/** What one command run through the shell gave. */
export interface ShellResult {
  readonly stdout: Buffer;
  readonly stderr: string;
  /** The exit status (as a shell reports it: 126 or 127 when the command could not be run). */
  readonly code: number;
  /** True when the output passed `maxBytes`: the command was stopped there (with the shell). */
  readonly truncated: boolean;
}

/** How one command runs. */
export interface ShellRunOptions {
  readonly timeoutMs: number;
  readonly maxBytes: number;
  readonly signal?: AbortSignal;
}

/** Why a command run through the shell did not finish: it took too long, the caller left, or the shell ended. */
export class ShellRunError extends Error {
  constructor(
    message: string,
    readonly reason: "timeout" | "aborted" | "ended",
  ) {
    super(message);
  }
}

interface Running {
  readonly end: Buffer;
  readonly errorEnd: string;
  readonly options: ShellRunOptions;
  readonly resolve: (result: ShellResult) => void;
  readonly reject: (err: Error) => void;
  readonly timer: NodeJS.Timeout;
  readonly onAbort: () => void;
  out: Buffer[];
  outBytes: number;
  code: number | undefined;
  stderr: string;
  errorDone: boolean;
}

/**
 * Runs commands (argument arrays) through one long-lived `sh`, one at a time, instead of spawning each
 * from this process. Node.js spawns by forking its own process and waiting on its one thread until
 * the child has exec'd: with a server's heap that holds the event loop for 7 to 23 ms a spawn on the
 * 2-core test machine (docs/benchmarks.md, "Spawn stall"), a cost paid by every periodic command. The
 * shell forks itself (about a megabyte) instead. An argument holding a line break cannot be sent
 * (`canRun` says so; callers spawn those themselves). A command that passes its time or output limit,
 * or whose caller aborts, is stopped with the shell (it runs in its own process group), and the next
 * command starts another shell; so does a shell that died. The shell ends when this process does (its
 * stdin closes) and at `close`.
 */
export class CommandShell {
  private shell: ChildProcessWithoutNullStreams | undefined;
  private running: Running | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;
  /** True once `sh` could not be started: nothing runs through the shell from then on. */
  private unavailable = false;

  constructor(private readonly env: NodeJS.ProcessEnv) {}

  /**
   * False when `argv` cannot go through the shell (an argument with a line break or NUL), when the
   * shell is closed, or when no `sh` could be started here: the caller spawns the command itself.
   */
  canRun(argv: readonly string[]): boolean {
    return !this.closed && !this.unavailable && argv.every((a) => !/[\n\0]/.test(a));
  }

  /** The running shell's process id, if one runs (for diagnostics and tests). */
  get pid(): number | undefined {
    return this.shell?.pid;
  }

  /**
   * Runs `argv` (the program first) once the commands before it have ended. Rejects with ShellRunError
   * when it was stopped (time, abort) or the shell could not run it (not started, died meanwhile).
   */
  run(argv: readonly string[], options: ShellRunOptions): Promise<ShellResult> {
    if (!this.canRun(argv)) return Promise.reject(new Error("this command cannot run through the shell"));
    const result = this.queue.then(() => this.runNow(argv, options));
    this.queue = result.catch(() => undefined);
    return result;
  }

  /** Stops the shell and any command it runs. */
  close(): void {
    this.closed = true;
    this.stop(new ShellRunError("the command shell was closed", "ended"));
  }

  private runNow(argv: readonly string[], options: ShellRunOptions): Promise<ShellResult> {
    if (options.signal?.aborted) return Promise.reject(new ShellRunError("the caller went away", "aborted"));
    if (this.closed) return Promise.reject(new ShellRunError("the command shell was closed", "ended"));
    const shell = this.shell ?? this.start();
    const mark = randomBytes(8).toString("hex");
    return new Promise<ShellResult>((resolve, reject) => {
      const timer = setTimeout(
        () => this.stop(new ShellRunError(`took longer than ${options.timeoutMs} ms and was stopped`, "timeout")),
        options.timeoutMs,
      );
      const onAbort = () => this.stop(new ShellRunError("the caller went away", "aborted"));
      options.signal?.addEventListener("abort", onAbort, { once: true });
      this.running = {
        end: Buffer.from(`\n${mark} `),
        errorEnd: `\n${mark}\n`,
        options,
        resolve,
        reject,
        timer,
        onAbort,
        out: [],
        outBytes: 0,
        code: undefined,
        stderr: "",
        errorDone: false,
      };
      shell.stdin.write(`${mark}\n${argv.length}\n${argv.map((a) => `${a}\n`).join("")}`);
    });
  }

  private start(): ChildProcessWithoutNullStreams {
    // Its own process group, so stopping it stops the command it runs too.
    const shell = spawn("sh", ["-c", SCRIPT], { env: this.env, stdio: ["pipe", "pipe", "pipe"], detached: true });
    this.shell = shell;
    shell.on("error", (err) => {
      if (shell.pid === undefined) this.unavailable = true;
      this.ended(shell, new ShellRunError(`sh could not run: ${err.message}`, "ended"));
    });
    shell.on("exit", (code, signal) =>
      this.ended(shell, new ShellRunError(`the command shell ended (${signal ?? code})`, "ended")),
    );
    shell.stdin.on("error", () => {});
    // A read that fails (a reset socket) ends this shell like its exit would: without a listener the
    // stream's error would end the whole server.
    for (const [name, stream] of [
      ["output", shell.stdout],
      ["error output", shell.stderr],
    ] as const) {
      stream.on("error", (err) => {
        if (shell === this.shell) this.kill();
        this.ended(shell, new ShellRunError(`the command shell's ${name} failed: ${err.message}`, "ended"));
      });
    }
    shell.stdout.on("data", (chunk: Buffer) => this.onOutput(shell, chunk));
    shell.stderr.on("data", (chunk: Buffer) => this.onError(shell, chunk));
    // A server that is otherwise done does not wait for its shell.
    shell.unref();
    for (const stream of [shell.stdin, shell.stdout, shell.stderr])
      (stream as unknown as { unref?: () => void }).unref?.();
    return shell;
  }

  private onOutput(shell: ChildProcessWithoutNullStreams, chunk: Buffer): void {
    const run = this.running;
    if (shell !== this.shell || !run || run.code !== undefined) return;
    run.out.push(chunk);
    run.outBytes += chunk.length;
    // The end mark and status are the last thing the shell prints for a command: look for them in the
    // newest bytes only, so a large output is copied once (at the end), not once per chunk.
    const tail = lastBytes(run.out, run.end.length + 24);
    const at = tail.indexOf(run.end);
    if (at >= 0) {
      const close = tail.indexOf("\n", at + run.end.length);
      if (close >= 0) {
        run.code = Number(tail.subarray(at + run.end.length, close).toString("utf8"));
        run.outBytes -= tail.length - at;
        this.settle(run);
        return;
      }
    }
    if (run.outBytes > run.options.maxBytes + run.end.length + 24) {
      const stdout = Buffer.concat(run.out).subarray(0, run.options.maxBytes);
      this.running = undefined;
      this.finish(run);
      this.kill();
      run.resolve({ stdout, stderr: run.stderr, code: 0, truncated: true });
    }
  }

  private onError(shell: ChildProcessWithoutNullStreams, chunk: Buffer): void {
    const run = this.running;
    if (shell !== this.shell || !run || run.errorDone) return;
    run.stderr += chunk.toString("utf8");
    const at = run.stderr.indexOf(run.errorEnd);
    if (at < 0) {
      // Keep what a person needs of a long error, and room to find the mark.
      if (run.stderr.length > 8192) run.stderr = run.stderr.slice(0, 4096) + run.stderr.slice(-4096);
      return;
    }
    run.stderr = run.stderr.slice(0, at);
    run.errorDone = true;
    this.settle(run);
  }

  /** Answers the command once both its output and its error output have ended. */
  private settle(run: Running): void {
    if (run.code === undefined || !run.errorDone || this.running !== run) return;
    this.running = undefined;
    this.finish(run);
    const stdout = Buffer.concat(run.out).subarray(0, run.outBytes);
    if (stdout.length > run.options.maxBytes) {
      run.resolve({ stdout: stdout.subarray(0, run.options.maxBytes), stderr: run.stderr, code: 0, truncated: true });
      return;
    }
    run.resolve({ stdout, stderr: run.stderr, code: run.code, truncated: false });
  }

  private finish(run: Running): void {
    clearTimeout(run.timer);
    run.options.signal?.removeEventListener("abort", run.onAbort);
  }

  /** Stops the shell and its command; the command running fails with `why`. */
  private stop(why: ShellRunError): void {
    const shell = this.shell;
    if (!shell) return;
    this.kill();
    this.ended(shell, why);
  }

  private kill(): void {
    const pid = this.shell?.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      this.shell?.kill("SIGKILL");
    }
    this.shell = undefined;
  }

  /** The shell is gone: the command running fails with `why`, and the next one starts another. */
  private ended(shell: ChildProcessWithoutNullStreams, why: ShellRunError): void {
    if (shell === this.shell) this.shell = undefined;
    const run = this.running;
    if (!run || (this.shell !== undefined && shell !== this.shell)) return;
    this.running = undefined;
    this.finish(run);
    run.reject(why);
  }
}

/** The last `count` bytes (or fewer) of the chunks, copied from the newest chunks only. */
function lastBytes(chunks: readonly Buffer[], count: number): Buffer {
  const parts: Buffer[] = [];
  let size = 0;
  for (let i = chunks.length - 1; i >= 0 && size < count; i--) {
    const chunk = chunks[i] as Buffer;
    parts.unshift(chunk.length > count - size ? chunk.subarray(chunk.length - (count - size)) : chunk);
    size += parts[0]?.length ?? 0;
  }
  return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
}
