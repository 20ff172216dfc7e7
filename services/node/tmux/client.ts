import { spawn } from "node:child_process";

/** Longest a single tmux command may take before it is killed: a wedged server must not hang an RPC. */
const TMUX_COMMAND_TIMEOUT_MS = 10_000;
/** Largest output read from one tmux command (bounded captures stay far below it). */
const TMUX_MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

/**
 * What tmux says when there is no server to ask: none runs, or it exited while the command ran (the
 * last session ended, e.g. a command that exits at once).
 */
const NO_SERVER = /no server running|error connecting to|server exited unexpectedly|lost server/i;
/** What a listing says while the server is shutting down with no session left. */
const NO_SESSIONS = /no current target/i;

/** True when tmux's words say there is nothing to list: no server runs, or it is ending with no session. */
export function isNothingToList(stderr: string): boolean {
  return NO_SERVER.test(stderr) || NO_SESSIONS.test(stderr);
}

/** A tmux command failed; `stderr` holds tmux's own words. */
export class TmuxError extends Error {
  constructor(
    message: string,
    readonly stderr: string,
    readonly exitCode: number | null,
  ) {
    super(message);
    this.name = "TmuxError";
  }

  /** True when tmux said there is no server, session, window or pane of that name. */
  get isNotFound(): boolean {
    return NO_SERVER.test(this.stderr) || /can't find|no such|session not found/i.test(this.stderr);
  }
}

/** Where a TmuxClient finds its server. */
export interface TmuxClientOptions {
  /** A `-L` socket name; undefined means tmux's default server. */
  readonly socketName?: string;
  /** The tmux binary; default `tmux` from PATH. */
  readonly tmuxPath?: string;
  /** Environment for tmux processes; `TMUX` is always removed so nesting checks never trigger. */
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * Ends one tmux command and starts the next in the same invocation (tmux's own `;`). Only this value
 * separates commands: every string argument is escaped, so a `;` in data never does.
 */
export const NEXT_COMMAND: unique symbol = Symbol("tmux command separator");

/** What one tmux invocation printed, and how it exited. */
export interface TmuxResult {
  readonly stdout: string;
  /** tmux's own words, trimmed. */
  readonly stderr: string;
  /** The exit code; null when a signal ended it. */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** One argument of a tmux invocation: a literal string, or the separator between two commands. */
export type TmuxArgument = string | typeof NEXT_COMMAND;

/** How one tmux command runs, beyond its arguments. */
export interface TmuxRunOptions {
  /** Bytes for the command's stdin (`load-buffer -`); stdin is closed when absent. */
  readonly input?: string | Buffer;
  /**
   * The tmux client process's working directory, which tmux takes as a new session's directory when
   * `-c` is absent. That path never passes through tmux's format expansion (which `-c` does).
   */
  readonly cwd?: string;
}

/**
 * The one way StarAgent talks to tmux: every command is an argument array (never a shell string) on
 * the configured socket, with every argument escaped for tmux's own command parser (a trailing `;`
 * would end the command) and `-u`, so tmux writes UTF-8 and control characters as they are whatever
 * the locale (without it, under `LANG=C`, tmux prints the field separators of our formats as `_`).
 */
export class TmuxClient {
  readonly tmuxPath: string;
  readonly socketName: string | undefined;
  private readonly env: NodeJS.ProcessEnv;

  constructor(options: TmuxClientOptions = {}) {
    this.tmuxPath = options.tmuxPath ?? "tmux";
    this.socketName = options.socketName;
    const env = { ...(options.env ?? process.env) };
    delete env.TMUX;
    delete env.TMUX_PANE;
    this.env = env;
  }

  /**
   * The full argument vector (after the binary) for `args` on this client's server: what `run` spawns,
   * and what a pty running `tmux attach-session` must be given so that it follows the same rules.
   */
  argv(args: readonly TmuxArgument[]): string[] {
    const socket = this.socketName === undefined ? [] : ["-L", this.socketName];
    return ["-u", ...socket, ...args.map((a) => (a === NEXT_COMMAND ? ";" : escapeArgument(a)))];
  }

  /** The environment tmux processes run with. */
  get environment(): NodeJS.ProcessEnv {
    return { ...this.env };
  }

  /** Runs `tmux [socket] ...args` and returns its stdout; throws TmuxError on a non-zero exit. */
  async run(args: readonly TmuxArgument[], options: TmuxRunOptions = {}): Promise<string> {
    const result = await this.exec(args, options);
    if (result.code === 0) return result.stdout;
    const command = args.find((a): a is string => typeof a === "string") ?? "";
    const why = result.stderr || (result.signal ? `killed by ${result.signal}` : `exit ${result.code}`);
    throw new TmuxError(`tmux ${command} failed: ${why}`, result.stderr, result.code);
  }

  /**
   * Runs `tmux [socket] ...args` and returns what it printed and how it exited, failed or not: in an
   * invocation of several commands, tmux stops at the first that fails, and the output of those before
   * it is still wanted (`capturePanes`). Throws TmuxError only when tmux cannot be started.
   */
  exec(args: readonly TmuxArgument[], options: TmuxRunOptions = {}): Promise<TmuxResult> {
    const { input, cwd } = options;
    return new Promise((resolve, reject) => {
      const child = spawn(this.tmuxPath, this.argv(args), {
        // tmux prefers $PWD over getcwd() when both name the same directory: the path as given.
        env: cwd === undefined ? this.env : { ...this.env, PWD: cwd },
        cwd,
        stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
        timeout: TMUX_COMMAND_TIMEOUT_MS,
      });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      let size = 0;
      child.stdout?.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > TMUX_MAX_OUTPUT_BYTES) child.kill("SIGKILL");
        else out.push(chunk);
      });
      child.stderr?.on("data", (chunk: Buffer) => err.push(chunk));
      // A failed read of its output (a reset socket) fails the command; without a listener it would
      // end the server.
      let streamError: Error | undefined;
      for (const stream of [child.stdout, child.stderr]) {
        stream?.on("error", (e) => {
          streamError ??= e;
          child.kill("SIGKILL");
        });
      }
      child.on("error", (e) => {
        // With a cwd, a failed spawn is usually that folder (gone or not enterable), not tmux.
        const what = cwd === undefined ? `cannot run ${this.tmuxPath}` : `cannot run ${this.tmuxPath} in ${cwd}`;
        reject(new TmuxError(`${what}: ${e.message}`, e.message, null));
      });
      child.on("close", (code, signal) => {
        if (streamError) {
          const why = `the output of ${this.tmuxPath} could not be read: ${streamError.message}`;
          reject(new TmuxError(why, streamError.message, null));
          return;
        }
        resolve({
          stdout: Buffer.concat(out).toString("utf8"),
          stderr: Buffer.concat(err).toString("utf8").trim(),
          code,
          signal,
        });
      });
      if (input !== undefined && child.stdin) {
        child.stdin.on("error", () => {});
        child.stdin.end(input);
      }
    });
  }

  /**
   * Runs a query whose failure because no server is running means "nothing there": returns "" then,
   * so listing an empty machine is not an error.
   */
  async query(args: readonly TmuxArgument[]): Promise<string> {
    try {
      return await this.run(args);
    } catch (err) {
      if (err instanceof TmuxError && isNothingToList(err.stderr)) return "";
      throw err;
    }
  }
}

/**
 * Escapes one argument for tmux's command-line parser, which treats any argument ending in `;` as the
 * end of a command (so `["echo", ";", "kill-server"]` would run a second tmux command). tmux turns a
 * final `\;` back into `;`, so every argument comes out as given (`a\;` included). `TmuxClient`
 * applies it to every argument; only NEXT_COMMAND separates commands.
 */
export function escapeArgument(arg: string): string {
  return arg.endsWith(";") ? `${arg.slice(0, -1)}\\;` : arg;
}

/** An exact-match session target (`=name`), so `foo` can never select `foobar`. */
export function sessionTarget(name: string): string {
  return `=${name}`;
}
