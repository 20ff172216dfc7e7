import { spawn } from "node:child_process";
import { Code, ConnectError } from "@connectrpc/connect";
import { CommandShell, type ShellResult, ShellRunError } from "../../common/command-shell.js";
import { withoutSecrets } from "../../common/config.js";

/** Longest one git call may take before it is killed (a status of 100 000 files takes well under it). */
export const GIT_TIMEOUT_MS = 10_000;
/** Most output read from one git call by default; past it git is stopped and the result marked cut. */
export const GIT_MAX_OUTPUT_BYTES = 16 * 1024 * 1024;
/**
 * The niceness git runs at (through `nice`, so its index-preload threads have it too). A status of a
 * large repository keeps every core busy for a moment; at the Node's own priority it delayed the
 * Node's event loop (terminals, watches) by tens of milliseconds on two cores. Lowered, git takes
 * whatever the machine does not need right then, and on an idle machine it runs as fast as before.
 */
export const GIT_NICENESS = 10;
/** What `nice` exits with when it cannot run the command it was given (coreutils: 127, not found). */
const NICE_COMMAND_NOT_FOUND = 127;

/**
 * Configuration every call overrides, so reading a repository never runs a program the repository
 * names: no fsmonitor hook, no pager, no colour, UTF-8 paths unquoted in diff headers.
 */
const SAFE_CONFIG = [
  "-c",
  "core.fsmonitor=false",
  "-c",
  "core.quotePath=false",
  "-c",
  "color.ui=false",
  "-c",
  "core.pager=cat",
  "-c",
  "diff.noprefix=false",
];

/** What one git call gave. */
export interface GitResult {
  readonly stdout: Buffer;
  readonly code: number;
  /** True when the output reached the limit and git was stopped there. */
  readonly truncated: boolean;
  readonly stderr: string;
}

/** Options of one git call. */
export interface GitOptions {
  readonly timeoutMs?: number;
  readonly maxBytes?: number;
  /** Exit codes that are answers rather than failures (`diff --no-index` exits 1 on a difference). */
  readonly okCodes?: readonly number[];
  readonly signal?: AbortSignal;
}

/** How a git call is run: `runGit`, or a GitShell's `run`. */
export type GitRun = (cwd: string, args: readonly string[], options?: GitOptions) => Promise<GitResult>;

/** A git call that failed: its exit code and what git said on stderr (a sentence for people). */
export class GitError extends Error {
  constructor(
    message: string,
    readonly code: number,
    readonly stderr: string,
  ) {
    super(message);
  }
}

/**
 * Runs `git -C cwd …args` as a child process with an argument array (never a shell), at GIT_NICENESS
 * (`nice -n N git …`, also an argument array; `nice` execs git, so the child is git itself), streaming
 * its output into a buffer of at most `maxBytes` (then git is stopped and the result marked truncated),
 * killed after `timeoutMs` (DEADLINE_EXCEEDED). `GIT_OPTIONAL_LOCKS=0` keeps status from taking the
 * index lock the agent may need; the environment holds no StarAgent token; no prompt can wait for a
 * terminal. The event loop only ever sees chunks of output, so a large repository never stalls it.
 */
export function runGit(cwd: string, args: readonly string[], options: GitOptions = {}): Promise<GitResult> {
  const timeoutMs = options.timeoutMs ?? GIT_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? GIT_MAX_OUTPUT_BYTES;
  const okCodes = options.okCodes ?? [0];
  return new Promise((resolve, reject) => {
    const [program, ...rest] = gitArgv(cwd, args);
    const child = spawn(program as string, rest, { stdio: ["ignore", "pipe", "pipe"], env: gitEnvironment() });
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    let stderr = "";
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, timeoutMs);
    const onAbort = () => child.kill("SIGKILL");
    options.signal?.addEventListener("abort", onAbort, { once: true });
    child.stdout.on("data", (chunk: Buffer) => {
      if (truncated) return;
      const room = maxBytes - size;
      if (chunk.length >= room) {
        chunks.push(chunk.subarray(0, room));
        size = maxBytes;
        truncated = true;
        child.kill("SIGKILL");
        return;
      }
      chunks.push(chunk);
      size += chunk.length;
    });
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < 4096) stderr += chunk.toString("utf8");
    });
    // A failed read of its output (a reset socket) fails the call; without a listener it would end the
    // server.
    let streamError: Error | undefined;
    for (const stream of [child.stdout, child.stderr]) {
      stream.on("error", (err) => {
        streamError ??= err;
        child.kill("SIGKILL");
      });
    }
    child.on("error", (err) => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      reject(new ConnectError(`git could not be started: ${err.message}`, Code.FailedPrecondition));
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      const stdout = Buffer.concat(chunks, size);
      if (timedOut) {
        reject(
          new ConnectError(
            `git ${args[0] ?? ""} took longer than ${timeoutMs} ms and was stopped`,
            Code.DeadlineExceeded,
          ),
        );
        return;
      }
      if (options.signal?.aborted) {
        reject(new ConnectError("the caller went away", Code.Canceled));
        return;
      }
      if (streamError) {
        reject(
          new ConnectError(
            `git ${args[0] ?? ""}: its output could not be read (${streamError.message})`,
            Code.Unavailable,
          ),
        );
        return;
      }
      try {
        resolve(gitOutcome(args, { stdout, code: code ?? -1, truncated, stderr }, okCodes));
      } catch (err) {
        reject(err);
      }
    });
  });
}

/** The argument vector of a git call (`nice` first): see `runGit`. */
function gitArgv(cwd: string, args: readonly string[]): string[] {
  return ["nice", "-n", String(GIT_NICENESS), "git", "-C", cwd, ...SAFE_CONFIG, ...args];
}

/** The environment of every git call: see `runGit`. */
function gitEnvironment(): NodeJS.ProcessEnv {
  return {
    ...withoutSecrets(process.env),
    GIT_OPTIONAL_LOCKS: "0",
    // A path from the caller is a path, never a pattern (`*`, `:(glob)` and other pathspec magic).
    GIT_LITERAL_PATHSPECS: "1",
    GIT_TERMINAL_PROMPT: "0",
    GIT_PAGER: "cat",
    LC_ALL: "C",
  };
}

/** A finished git call's result, or the error its exit status means. */
function gitOutcome(args: readonly string[], result: GitResult, okCodes: readonly number[]): GitResult {
  if (result.truncated) return { ...result, code: 0 };
  if (result.code === NICE_COMMAND_NOT_FOUND && /\bgit\b.*(No such file|not found)/i.test(result.stderr))
    throw new ConnectError("git could not be started: it is not installed on this machine", Code.FailedPrecondition);
  if (!okCodes.includes(result.code))
    throw new GitError(`git ${args[0] ?? ""} failed: ${firstLine(result.stderr)}`, result.code, result.stderr);
  return result;
}

/**
 * Runs git calls through one long-lived shell (CommandShell) rather than a spawn each, for callers
 * that run git periodically (the workspace tracker's statuses): the same argument vector, environment,
 * limits and errors as `runGit`. A call the shell cannot take (an argument with a line break, no `sh`
 * here) is spawned by `runGit`.
 */
export class GitShell {
  private readonly shell = new CommandShell(gitEnvironment());

  async run(cwd: string, args: readonly string[], options: GitOptions = {}): Promise<GitResult> {
    const argv = gitArgv(cwd, args);
    if (!this.shell.canRun(argv)) return runGit(cwd, args, options);
    const timeoutMs = options.timeoutMs ?? GIT_TIMEOUT_MS;
    let result: ShellResult;
    try {
      result = await this.shell.run(argv, {
        timeoutMs,
        maxBytes: options.maxBytes ?? GIT_MAX_OUTPUT_BYTES,
        signal: options.signal,
      });
    } catch (err) {
      if (!this.shell.canRun(argv)) return runGit(cwd, args, options);
      if (err instanceof ShellRunError && err.reason === "timeout")
        throw new ConnectError(
          `git ${args[0] ?? ""} took longer than ${timeoutMs} ms and was stopped`,
          Code.DeadlineExceeded,
        );
      if (err instanceof ShellRunError && err.reason === "aborted")
        throw new ConnectError("the caller went away", Code.Canceled);
      throw new ConnectError(
        `git could not be run: ${err instanceof Error ? err.message : String(err)}`,
        Code.Unavailable,
      );
    }
    return gitOutcome(args, { ...result, stderr: result.stderr.slice(0, 4096) }, options.okCodes ?? [0]);
  }

  /** Stops the shell; later calls spawn git directly. */
  close(): void {
    this.shell.close();
  }
}

function firstLine(text: string): string {
  return text.trim().split("\n")[0]?.slice(0, 300) ?? "";
}

/** Shells a GitShellPool keeps: calls beyond this many at once are spawned rather than queued. */
export const GIT_POOL_SHELLS = 3;

/**
 * GitShells for the workspace API's calls (GetChanges, GetFileDiff), so answering one spawns nothing
 * from the machine's thread (a spawn holds it 6 to 13 ms, docs/benchmarks.md). Each call takes an idle
 * shell; with every shell busy (more than GIT_POOL_SHELLS calls at once), it spawns git by `runGit`
 * instead of waiting behind a long diff.
 */
export class GitShellPool {
  private readonly idle: GitShell[] = [];
  private started = 0;
  private closed = false;

  constructor(private readonly shells = GIT_POOL_SHELLS) {}

  readonly run: GitRun = async (cwd, args, options) => {
    const shell = this.closed ? undefined : (this.idle.pop() ?? this.startShell());
    if (!shell) return runGit(cwd, args, options);
    try {
      return await shell.run(cwd, args, options);
    } finally {
      if (this.closed) shell.close();
      else this.idle.push(shell);
    }
  };

  /** Stops the idle shells now and the busy ones when their call ends; later calls spawn git. */
  close(): void {
    this.closed = true;
    for (const shell of this.idle.splice(0)) shell.close();
  }

  private startShell(): GitShell | undefined {
    if (this.started >= this.shells) return undefined;
    this.started++;
    return new GitShell();
  }
}
