import { type ChildProcess, execFile, spawn } from "node:child_process";
import { SUPERVISION_OPTION, type SupervisionRecord } from "../tmux/supervision-record.js";

/** How a supervisor paces restarts. */
export interface RestartTimings {
  /** The wait before the first restart after an exit. */
  readonly initialBackoffMs: number;
  /** The longest wait: each exit doubles the last wait up to this. */
  readonly maxBackoffMs: number;
  /** A run at least this long counts as stable: the next exit waits initialBackoffMs again. */
  readonly stableMs: number;
}

/**
 * A person expects a service to come back at once after a crash, not to spin when it cannot start
 * (a port taken, a bad flag): one second, doubling to a minute, back to one second after a stable
 * minute (as systemd's and launchd's restart throttles do).
 */
export const DEFAULT_RESTART_TIMINGS: RestartTimings = {
  initialBackoffMs: 1_000,
  maxBackoffMs: 60_000,
  stableMs: 60_000,
};

/** Lines of the service's output kept from its last run (shown when it exited). */
export const SUPERVISED_LAST_LINES = 15;
/** Longest line kept: a service printing one endless line must not grow the record without bound. */
const MAX_LINE_CHARS = 500;
/** How long the supervisor lets the service end after passing on SIGTERM before it sends SIGKILL. */
const STOP_GRACE_MS = 8_000;

/** What `supervise` runs and how. */
export interface SuperviseOptions {
  /** The service's argv (never a shell string). */
  readonly argv: readonly string[];
  readonly timings: RestartTimings;
  /** Called before each start (a Hub's or Node's secrets are put where its process takes them). */
  readonly beforeStart?: () => Promise<void>;
  /** Where each record goes (by default the pane option, through `tmux set-option`). */
  readonly record?: (record: SupervisionRecord) => Promise<void>;
  /** Where the service's output is passed on to (by default this process's stdout and stderr). */
  readonly output?: { write(chunk: Buffer): void };
  /** Aborting stops the service (SIGTERM, then SIGKILL after a grace) and ends supervision. */
  readonly signal: AbortSignal;
  readonly now?: () => number;
}

/** The wait before the next start after a run of `ranMs` that followed a wait of `lastBackoffMs` (0: none yet). */
export function nextBackoff(timings: RestartTimings, lastBackoffMs: number, ranMs: number): number {
  if (ranMs >= timings.stableMs || lastBackoffMs === 0) return timings.initialBackoffMs;
  return Math.min(timings.maxBackoffMs, lastBackoffMs * 2);
}

/** The exit status a shell would report: the code, or 128 + the signal's number. */
function exitStatus(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  const signals: Record<string, number> = {
    SIGHUP: 1,
    SIGINT: 2,
    SIGQUIT: 3,
    SIGABRT: 6,
    SIGKILL: 9,
    SIGSEGV: 11,
    SIGTERM: 15,
  };
  return 128 + (signal ? (signals[signal] ?? 0) : 0);
}

/** Keeps the last lines of a stream of output, without terminal escape sequences. */
class LastLines {
  private lines: string[] = [];
  private partial = "";

  push(chunk: Buffer): void {
    const text = this.partial + chunk.toString("utf8");
    const parts = text.split(/\r?\n/);
    this.partial = (parts.pop() ?? "").slice(-MAX_LINE_CHARS);
    for (const part of parts) this.add(part);
  }

  /** The kept lines, the unfinished last one included; starts afresh for the next run. */
  take(): string[] {
    if (this.partial !== "") this.add(this.partial);
    const lines = this.lines;
    this.lines = [];
    this.partial = "";
    return lines;
  }

  private add(line: string): void {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: escape sequences are what is removed.
    const plain = line.replace(/\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)?|\x1b./g, "").trimEnd();
    if (plain.trim() === "") return;
    this.lines.push(plain.slice(0, MAX_LINE_CHARS));
    if (this.lines.length > SUPERVISED_LAST_LINES) this.lines.shift();
  }
}

/** Records `record` in this pane's SUPERVISION_OPTION (tmux finds its server and pane from $TMUX, $TMUX_PANE). */
export function recordInPane(pane: string): (record: SupervisionRecord) => Promise<void> {
  return (record) =>
    new Promise((resolve) => {
      execFile("tmux", ["set-option", "-p", "-t", pane, SUPERVISION_OPTION, JSON.stringify(record)], () => resolve());
    });
}

/**
 * Runs a service and starts it again whenever it exits, until `signal` aborts: the wait between
 * starts grows from `initialBackoffMs`, doubling to `maxBackoffMs`, and goes back to the initial wait
 * after a run of `stableMs`. Its output is passed on as it comes; the last lines of each run, its
 * exit status and the restarts are recorded after each exit (and each start), so the person can see
 * why it went. Resolves with its last exit status once it has ended after the abort.
 */
export async function supervise(options: SuperviseOptions): Promise<number> {
  const now = options.now ?? Date.now;
  const output = options.output ?? { write: (chunk: Buffer) => process.stdout.write(chunk) };
  const record = options.record ?? (async () => {});
  const lines = new LastLines();
  let restarts = 0;
  let backoff = 0;
  let last: Pick<SupervisionRecord, "lastExitStatus" | "lastExitAt" | "lastLines"> = {};
  while (!options.signal.aborted) {
    await options.beforeStart?.();
    const startedAt = now();
    const child: ChildProcess = spawn(options.argv[0] as string, options.argv.slice(1), {
      stdio: ["inherit", "pipe", "pipe"],
    });
    const exited = new Promise<number>((resolve) => {
      child.once("error", (err) => {
        lines.push(Buffer.from(`cannot start ${options.argv[0]}: ${err.message}\n`));
        resolve(127);
      });
      child.once("close", (code, signal) => resolve(exitStatus(code, signal)));
    });
    for (const stream of [child.stdout, child.stderr]) {
      stream?.on("data", (chunk: Buffer) => {
        lines.push(chunk);
        output.write(chunk);
      });
    }
    await record({ pid: child.pid, startedAt, restarts, backoffMs: backoff, ...last });
    const stop = () => {
      child.kill("SIGTERM");
      setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS).unref();
    };
    options.signal.addEventListener("abort", stop, { once: true });
    const status = await exited;
    options.signal.removeEventListener("abort", stop);
    const exitedAt = now();
    last = { lastExitStatus: status, lastExitAt: exitedAt, lastLines: lines.take() };
    if (options.signal.aborted) break;
    backoff = nextBackoff(options.timings, backoff, exitedAt - startedAt);
    const nextStartAt = exitedAt + backoff;
    output.write(
      Buffer.from(
        `\n[staragent: the service exited with status ${status}; starting it again in ${(backoff / 1000).toFixed(1)} s]\n`,
      ),
    );
    await record({ restarts, ...last, nextStartAt, backoffMs: backoff });
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, backoff);
      function done() {
        clearTimeout(timer);
        options.signal.removeEventListener("abort", done);
        resolve();
      }
      options.signal.addEventListener("abort", done, { once: true });
    });
    restarts++;
  }
  return last.lastExitStatus ?? 0;
}

/** The flags by which `start` passes RestartTimings to `staragent system supervise` (tests shorten them). */
const TIMING_FLAGS = {
  "--initial-backoff-ms": "initialBackoffMs",
  "--max-backoff-ms": "maxBackoffMs",
  "--stable-ms": "stableMs",
} as const satisfies Record<string, keyof RestartTimings>;

/** The flags that give `timings` to `staragent system supervise`. */
export function timingFlags(timings: RestartTimings): string[] {
  return Object.entries(TIMING_FLAGS).flatMap(([flag, key]) => [flag, String(timings[key])]);
}

/**
 * `staragent system supervise SERVICE [TIMING FLAGS] -- ARGV...`: what a system session runs. It takes
 * the service's secrets (`start` left them in a file) and keeps them in memory, puts them back for
 * each start of ARGV (which takes and removes them at once), runs ARGV under `supervise`, and records
 * each start and exit in its pane's SUPERVISION_OPTION. SIGTERM, SIGINT or SIGHUP stop the service
 * and end the session. Returns the service's last exit status.
 */
export async function runSupervisor(
  service: string,
  args: readonly string[],
  home: string,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const separator = args.indexOf("--");
  const argv = separator < 0 ? [] : args.slice(separator + 1);
  const flags = separator < 0 ? args : args.slice(0, separator);
  const timings: Record<keyof RestartTimings, number> = { ...DEFAULT_RESTART_TIMINGS };
  for (let i = 0; i < flags.length; i += 2) {
    const key = TIMING_FLAGS[flags[i] as keyof typeof TIMING_FLAGS];
    const value = Number(flags[i + 1]);
    if (!key || !Number.isSafeInteger(value) || value < 0) {
      process.stderr.write(`staragent system supervise: not a timing flag: ${flags[i]} ${flags[i + 1] ?? ""}\n`);
      return 2;
    }
    timings[key] = value;
  }
  if (argv.length === 0) {
    process.stderr.write(
      "usage: staragent system supervise SERVICE [TIMING FLAGS] -- ARGV... (what a system session runs)\n",
    );
    return 2;
  }
  const { putLaunchSecrets, takeLaunchSecrets } = await import("./launch-secrets.js");
  const secrets = service === "tailscaled" ? {} : await takeLaunchSecrets(home, service);
  const stop = new AbortController();
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(signal, () => stop.abort());
  const pane = env.TMUX_PANE;
  const record = pane ? recordInPane(pane) : undefined;
  const status = await supervise({
    argv,
    timings,
    signal: stop.signal,
    beforeStart: service === "tailscaled" ? undefined : () => putLaunchSecrets(home, service, secrets),
    record,
  });
  if (service !== "tailscaled") await putLaunchSecrets(home, service, {});
  return status;
}
