import type { WatchSessionsResponse } from "../../gen/staragent/v1/session_service_pb.js";

/** How long a watch may take to report a change made by hand (watch loops poll every 250 ms). */
export const WATCH_EVENT_TIMEOUT_MS = 5_000;

/** Reads a WatchSessions stream event by event, waiting for the ones a test expects. */
export interface WatchReader {
  /** The next event matching `match` (earlier ones are skipped); fails after WATCH_EVENT_TIMEOUT_MS. */
  next(match: (event: WatchSessionsResponse) => boolean, what: string): Promise<WatchSessionsResponse>;
  /** Ends the stream. */
  close(): Promise<void>;
}

/** Starts reading `open(signal)`; close it in `finally`. */
export function readWatch(open: (signal: AbortSignal) => AsyncIterable<WatchSessionsResponse>): WatchReader {
  const abort = new AbortController();
  const stream = open(abort.signal)[Symbol.asyncIterator]();
  return {
    async next(match, what) {
      const deadline = Date.now() + WATCH_EVENT_TIMEOUT_MS;
      for (;;) {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`no ${what} within ${WATCH_EVENT_TIMEOUT_MS} ms`)),
            Math.max(0, deadline - Date.now()),
          );
        });
        try {
          const r = await Promise.race([stream.next(), timeout]);
          if (r.done) throw new Error(`the stream ended before ${what}`);
          if (match(r.value)) return r.value;
        } finally {
          clearTimeout(timer);
        }
      }
    },
    async close() {
      abort.abort();
      await stream.return?.().catch(() => undefined);
    },
  };
}
