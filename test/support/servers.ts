import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { forgetProcess, rememberProcess } from "./leftovers.js";

/** The repository root. */
export const REPO_ROOT = resolve(import.meta.dirname, "../..");
/**
 * The compiled `staragent` command, run with node as the installed one is. Vitest's global setup
 * (build-services.ts) builds it before the tests run.
 */
export const STARAGENT_BIN = join(REPO_ROOT, "dist/staragent.js");

/** A Hub or Node process started for a test. */
export interface ServerProcess {
  readonly url: string;
  readonly home: string;
  readonly token: string;
  readonly process: ChildProcess;
  /** Everything the process wrote to stderr so far (its log). */
  stderr(): string;
  /** Everything the process wrote to stdout so far (where it listens, the Hub's login link). */
  stdout(): string;
  /** Stops the process (SIGTERM, then SIGKILL) and removes its temporary home. */
  stop(): Promise<void>;
}

/** Options for a server process. */
export interface ServerProcessOptions {
  readonly kind: "hub" | "node";
  readonly tmuxSocket: string;
  readonly token: string;
  readonly args?: string[];
  readonly env?: NodeJS.ProcessEnv;
  /** Reuse a home folder (for restart tests); a fresh temporary one otherwise. */
  readonly home?: string;
  /** A command the process runs under (its argv before node's), e.g. `withoutFilePermissionOverride()`. */
  readonly wrapper?: readonly string[];
  /** Another `staragent` executable to run (an installed package's), instead of the repository's build. */
  readonly bin?: string;
  /** The working folder of the process (default: this one's). */
  readonly cwd?: string;
}

/**
 * A wrapper that takes away root's power to ignore file permissions (when the tests run as root), so
 * a process sees `chmod 000` files and read-only folders as any user would. Empty for other users.
 */
export function withoutFilePermissionOverride(): string[] {
  return process.getuid?.() === 0 ? ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"] : [];
}

/** Starts `staragent hub|node --port 0` on loopback and waits until it says where it listens. */
export async function startServerProcess(options: ServerProcessOptions): Promise<ServerProcess> {
  const home = options.home ?? (await mkdtemp(join(tmpdir(), "sa-home-")));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    STARAGENT_HOME: home,
    STARAGENT_TMUX_SOCKET: options.tmuxSocket,
    ...(options.kind === "hub" ? { STARAGENT_AUTH_TOKEN: options.token } : { STARAGENT_NODE_TOKEN: options.token }),
    ...options.env,
  };
  const args = [options.kind, "--port", "0", ...(options.args ?? [])];
  const [command, argv] = options.bin ? [options.bin, args] : [process.execPath, [STARAGENT_BIN, ...args]];
  const [program, ...prefix] = [...(options.wrapper ?? []), command];
  const child = spawn(program ?? command, [...prefix, ...argv], {
    env,
    cwd: options.cwd,
    stdio: ["ignore", "pipe", "pipe"],
  });
  rememberProcess(child);
  child.once("exit", () => forgetProcess(child));
  let stdout = "";
  let stderr = "";
  child.stderr?.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  // A server that fails on its own while a test runs (an exit code, not a signal a test sent) says so
  // with the end of its log: the tests that fail after it only see refused connections.
  child.once("exit", (code) => {
    if (code === null || code === 0) return;
    process.stderr.write(
      `\n${options.kind} (pid ${child.pid}) exited with code ${code}; the end of its log:\n${stderr.slice(-4000)}\n`,
    );
  });
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`${options.kind} did not start in time:\n${stderr}`)), 20_000);
    child.stdout?.on("data", (c: Buffer) => {
      stdout += c.toString();
      const match = /listening on (https?:\/\/\S+)/.exec(stdout);
      if (match?.[1]) {
        clearTimeout(timer);
        resolveUrl(match[1]);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${options.kind} exited with ${code}:\n${stderr}`));
    });
  });
  return {
    url,
    home,
    token: options.token,
    process: child,
    stderr: () => stderr,
    stdout: () => stdout,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
        await exited;
        clearTimeout(timer);
      }
      if (!options.home) await rm(home, { recursive: true, force: true });
    },
  };
}

/** What a finished child process printed, and how it exited. */
export interface ProcessResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `command args` to completion (no stdin), with `env` added to this process's environment. */
export function runProcess(
  command: string,
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<ProcessResult> {
  return new Promise((resolveRun) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr?.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    child.once("close", (code) => resolveRun({ code, stdout, stderr }));
  });
}

/** Runs the `staragent` command to completion; resolves with its exit code and output. */
export function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<ProcessResult> {
  return runProcess(process.execPath, [STARAGENT_BIN, ...args], { env });
}

/** Runs `staragent ARGS` with `input` on its stdin. */
export function runCliWithInput(args: string[], env: NodeJS.ProcessEnv, input: string): Promise<ProcessResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [STARAGENT_BIN, ...args], {
      env: { ...process.env, ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    child.once("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}
