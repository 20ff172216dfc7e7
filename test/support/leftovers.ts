import { execFileSync } from "node:child_process";

/**
 * What this process started and has not stopped yet: server processes and private tmux servers.
 * Tests and benchmarks stop them in their own `finally`; this is for when that never runs (a
 * benchmark stopped with Ctrl-C, a process ending on an uncaught error), so that a Hub, a Node or a
 * tmux server with a hundred stand-in agents never outlives the run that started it.
 */
const processes = new Set<{ readonly pid?: number; readonly exitCode: number | null; readonly signalCode: unknown }>();
const tmuxSockets = new Set<string>();
let hooked = false;

function hook(): void {
  if (hooked) return;
  hooked = true;
  process.once("exit", stopLeftovers);
}

/** Remembers a child process until `forgetProcess`. */
export function rememberProcess(child: {
  readonly pid?: number;
  readonly exitCode: number | null;
  readonly signalCode: unknown;
}): void {
  hook();
  processes.add(child);
}

/** Forgets a child process that was stopped (or exited). */
export function forgetProcess(child: object): void {
  processes.delete(child as never);
}

/** Remembers a private tmux server (`tmux -L socketName`) until `forgetTmux`. */
export function rememberTmux(socketName: string): void {
  hook();
  tmuxSockets.add(socketName);
}

/** Forgets a private tmux server that was killed. */
export function forgetTmux(socketName: string): void {
  tmuxSockets.delete(socketName);
}

/**
 * Stops, at once and synchronously (as an `exit` handler must), every remembered process still
 * running (SIGKILL: no time is left to wait for a graceful end) and kills every remembered private
 * tmux server (never the default one: only `-L` sockets are ever remembered).
 */
export function stopLeftovers(): void {
  for (const child of processes) {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(child.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
  }
  processes.clear();
  for (const socket of tmuxSockets) {
    try {
      execFileSync("tmux", ["-L", socket, "kill-server"], { stdio: "ignore", timeout: 5_000 });
    } catch {
      // No server on that socket (any more).
    }
  }
  tmuxSockets.clear();
}

/**
 * Makes SIGINT and SIGTERM end this process through its `exit` handlers (Node skips them for a
 * signal it has no handler for), with the shell's status for the signal. For scripts (benchmarks),
 * never inside a test runner's worker, which handles its own signals.
 */
export function exitOnSignals(): void {
  for (const [signal, status] of [
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const) {
    process.once(signal, () => {
      console.error(`\n${signal}: stopping what this run started`);
      process.exit(status);
    });
  }
}
