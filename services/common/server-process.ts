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
