import { setFlagsFromString } from "node:v8";

/**
 * What the Hub's and the Node's `main.ts` share about running as a server process: reading `--port`
 * and staying up until the process is asked to stop.
 */

/** Parses a TCP port (0 picks a free one). */
export function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) throw new Error(`--port ${value}: not a port number (0 to 65535)`);
  return port;
}

/** Resolves on the first SIGINT or SIGTERM, so a server shuts down cleanly when stopped. */
export function waitForSignal(): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      process.off("SIGINT", done);
      process.off("SIGTERM", done);
      resolve();
    };
    process.on("SIGINT", done);
    process.on("SIGTERM", done);
  });
}

/**
 * How far V8 lets the Hub's heap grow past what survived the last full collection before it collects
 * again, in percent. V8's own choice for a process that is mostly idle is up to 300%: a Hub whose live
 * set is about 30 MB under `make load` reached 115 MB of heap and 228 MiB of RSS. 50% collects sooner
 * and more often, each time as little as the live set; nothing caps the heap, so a larger fleet still
 * gets all the memory it needs (docs/benchmarks.md has the figures). Nodes keep V8's default: under
 * `make load` the setting saved them little memory (110 to 115 MiB at peak, against 112 to 121) for a
 * few percent more CPU.
 */
export const SERVER_HEAP_GROWING_PERCENT = 50;

/**
 * Sets the heap growth of the Hub's process, unless it was started with its own
 * `--heap-growing-percent`.
 */
export function tuneServerHeap(execArgv: readonly string[] = process.execArgv): void {
  if (execArgv.some((a) => /^--heap[-_]growing[-_]percent\b/.test(a))) return;
  setFlagsFromString(`--heap-growing-percent=${SERVER_HEAP_GROWING_PERCENT}`);
}
