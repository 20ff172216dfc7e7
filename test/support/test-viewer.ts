import type { Client } from "@connectrpc/connect";
import type { AttachRequest, AttachResponse, TerminalStream } from "../../gen/staragent/v1/terminal_stream_pb.js";

/** Output a test viewer keeps for marker checks: bounded, so a flood cannot exhaust the test's memory. */
const OUTPUT_TAIL_CHARS = 64 * 1024;

/**
 * A viewer acknowledges output once it has this many unacknowledged bytes (as VS Code's terminal
 * does every 5 000 characters): far below the low watermark, so it never stalls, and one call per
 * several chunks rather than one per chunk.
 */
const ACK_EVERY_BYTES = 8 * 1024;

/** A scripted viewer's options. */
export interface TestViewerOptions {
  /** Acknowledge each output chunk once received (a well-behaved viewer); default true. */
  readonly ack?: boolean;
}

/**
 * A scripted TerminalStream viewer for tests and benchmarks (not used by the servers): attaches over
 * a real client, collects the output and events, acknowledges output like a browser would, and types
 * with increasing sequence numbers. `close` cancels the stream (the viewer goes away).
 */
export class TestViewer {
  /** The most recent output as text (the last OUTPUT_TAIL_CHARS), for looking for markers. */
  text = "";
  /** Output bytes received in all. */
  totalBytes = 0;
  /** Output chunks' sequence numbers, in order received. */
  readonly sequences: number[] = [];
  /** Events other than output, in order. */
  readonly events: AttachResponse[] = [];
  /** Set when the stream ended with an error. */
  error: unknown;
  /** True once the stream ended. */
  ended = false;
  private nextInput = 1;
  private unackedBytes = 0;
  private readonly decoder = new TextDecoder();
  private readonly abort = new AbortController();
  private acking: boolean;
  private readonly outputListeners = new Set<() => void>();
  private readonly chunkListeners = new Set<(data: Uint8Array) => void>();

  private constructor(
    private readonly client: Client<typeof TerminalStream>,
    readonly id: string,
    readonly attached: NonNullable<Extract<AttachResponse["event"], { case: "attached" }>["value"]>,
    options: TestViewerOptions,
  ) {
    this.acking = options.ack ?? true;
  }

  /** Attaches and resolves once `attached` arrived; rejects with the server's error. */
  static async attach(
    client: Client<typeof TerminalStream>,
    request: Pick<AttachRequest, "name"> &
      Partial<Pick<AttachRequest, "cols" | "rows" | "historyLines" | "takeOver" | "readOnly">>,
    options: TestViewerOptions = {},
  ): Promise<TestViewer> {
    const abort = new AbortController();
    const stream = client.attach({ cols: 80, rows: 24, ...request }, { signal: abort.signal });
    const iterator = stream[Symbol.asyncIterator]();
    const first = await iterator.next();
    if (first.done || first.value.event.case !== "attached") {
      abort.abort();
      throw new Error("the stream did not start with 'attached'");
    }
    const viewer = new TestViewer(client, first.value.event.value.attachmentId, first.value.event.value, options);
    viewer.abort.signal.addEventListener("abort", () => abort.abort());
    void viewer.consume(iterator);
    return viewer;
  }

  /** Calls `listener` with each output chunk as it arrives; returns the unsubscribe function. */
  onOutput(listener: (data: Uint8Array) => void): () => void {
    this.chunkListeners.add(listener);
    return () => this.chunkListeners.delete(listener);
  }

  /** Stops (or restarts) acknowledging output. */
  setAcking(on: boolean): void {
    this.acking = on;
  }

  /** Types `data` as the next input; resolves with the applied sequence. */
  async type(data: string | Uint8Array): Promise<number> {
    const sequence = this.nextInput++;
    const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    const res = await this.client.sendInput({ attachmentId: this.id, sequence, data: bytes });
    return res.appliedSequence;
  }

  /** Resolves once the output contains `marker` (checked on each chunk), or rejects after `timeoutMs`. */
  waitForOutput(marker: string, timeoutMs = 10_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (this.text.includes(marker)) {
          this.outputListeners.delete(check);
          clearTimeout(timer);
          resolve();
        }
      };
      const timer = setTimeout(() => {
        this.outputListeners.delete(check);
        reject(new Error(`output did not show ${JSON.stringify(marker)} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.outputListeners.add(check);
      check();
    });
  }

  /** Goes away: cancels the stream. */
  close(): void {
    this.abort.abort();
  }

  private async consume(iterator: AsyncIterator<AttachResponse>): Promise<void> {
    try {
      for (;;) {
        const next = await iterator.next();
        if (next.done) break;
        const event = next.value.event;
        if (event.case === "output") {
          this.totalBytes += event.value.data.byteLength;
          this.text += this.decoder.decode(event.value.data, { stream: true });
          if (this.text.length > 2 * OUTPUT_TAIL_CHARS) this.text = this.text.slice(-OUTPUT_TAIL_CHARS);
          this.sequences.push(event.value.sequence);
          this.unackedBytes += event.value.data.byteLength;
          if (this.acking && this.unackedBytes >= ACK_EVERY_BYTES) {
            this.unackedBytes = 0;
            // Not awaited, as a browser would not: acknowledgements are cumulative, a late one is harmless.
            void this.client
              .ackOutput({ attachmentId: this.id, sequence: event.value.sequence })
              .catch(() => undefined);
          }
          for (const listener of [...this.chunkListeners]) listener(event.value.data);
          for (const listener of [...this.outputListeners]) listener();
        } else {
          this.events.push(next.value);
        }
      }
    } catch (err) {
      if (!this.abort.signal.aborted) this.error = err;
    } finally {
      this.ended = true;
    }
  }
}
