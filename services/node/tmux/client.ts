import { spawn } from "node:child_process";

/** Longest a single tmux command may take before it is killed: a wedged server must not hang an RPC. */
const TMUX_COMMAND_TIMEOUT_MS = 10_000;
/** Largest output read from one tmux command (bounded captures stay far below it). */
const TMUX_MAX_OUTPUT_BYTES = 64 * 1024 * 1024;
/** Separates fields in `-F` formats: a control character no session name or path contains. */
export const FIELD_SEPARATOR = "\x1f";

/**
 * What tmux says when there is no server to ask: none runs, or it exited while the command ran (the
 * last session ended, e.g. a command that exits at once).
 */
const NO_SERVER = /no server running|error connecting to|server exited unexpectedly|lost server/i;
/** What a listing says while the server is shutting down with no session left. */
const NO_SESSIONS = /no current target/i;

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
 * The one way StarAgent talks to tmux: every command is an argument array (never a shell string) on
 * the configured socket. Arguments that tmux's own command parser would read as a command separator
 * (a trailing `;`) are escaped by `escapeArgument`.
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

  /** The arguments that select this client's server, to prefix any tmux argv (also for node-pty). */
  get socketArgs(): string[] {
    return this.socketName === undefined ? [] : ["-L", this.socketName];
  }

  /** The environment tmux processes run with. */
  get environment(): NodeJS.ProcessEnv {
    return { ...this.env };
  }

  /** Runs `tmux [socket] ...args` and returns its stdout; throws TmuxError on a non-zero exit. */
  run(args: readonly string[], input?: string | Buffer): Promise<string> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.tmuxPath, [...this.socketArgs, ...args], {
        env: this.env,
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
      child.on("error", (e) => reject(new TmuxError(`cannot run ${this.tmuxPath}: ${e.message}`, e.message, null)));
      child.on("close", (code, signal) => {
        const stderr = Buffer.concat(err).toString("utf8").trim();
        if (code === 0) resolve(Buffer.concat(out).toString("utf8"));
        else
          reject(
            new TmuxError(
              `tmux ${args[0] ?? ""} failed: ${stderr || (signal ? `killed by ${signal}` : `exit ${code}`)}`,
              stderr,
              code,
            ),
          );
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
  async query(args: readonly string[]): Promise<string> {
    try {
      return await this.run(args);
    } catch (err) {
      if (err instanceof TmuxError && (NO_SERVER.test(err.stderr) || NO_SESSIONS.test(err.stderr))) return "";
      throw err;
    }
  }
}

/**
 * Escapes one argument for tmux's command-line parser, which treats any argument ending in `;` as the
 * end of a command (so `["echo", ";", "kill-server"]` would run a second tmux command). A final `;`
 * preceded by a backslash is kept as a literal `;`.
 */
export function escapeArgument(arg: string): string {
  return arg.endsWith(";") ? `${arg.slice(0, -1)}\\;` : arg;
}

/** An exact-match session target (`=name`), so `foo` can never select `foobar`. */
export function sessionTarget(name: string): string {
  return `=${name}`;
}
