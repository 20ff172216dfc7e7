import { onAbort } from "./disposables.js";
import { WakeSignal } from "./wake-signal.js";

/**
 * A single-consumer queue that an async generator can drain: producers `push`, the consumer awaits
 * `next`. Used to turn callbacks (watch fan-out, pty output) into streaming RPC responses. `close`
 * ends the stream after what is queued; `fail` ends it with an error.
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private readonly ready = new WakeSignal();
  private closed = false;
  private error: unknown;

  /** Items waiting to be consumed. */
  get size(): number {
    return this.items.length;
  }

  push(item: T): void {
    if (this.closed) return;
    this.items.push(item);
    this.ready.wake();
  }

  close(): void {
    this.closed = true;
    this.ready.wake();
  }

  fail(error: unknown): void {
    this.error = error;
    this.close();
  }

  /** Removes and returns everything queued (for coalescing). */
  drain(): T[] {
    return this.items.splice(0, this.items.length);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for (;;) {
      this.ready.take();
      if (this.items.length > 0) {
        yield this.items.shift() as T;
        continue;
      }
      if (this.closed) {
        if (this.error !== undefined) throw this.error;
        return;
      }
      await this.ready.wait();
    }
  }
}

/**
 * Resolves after `ms`, or at once when `signal` aborts: loops that wait between passes stop at once
 * when their owner closes, without an abort error to catch at every call. Built on the global
 * `setTimeout` rather than `node:timers/promises`, whose functions are bound at import and so escape
 * the fake timers the loops' schedule tests run on.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const stopWaiting = signal === undefined ? undefined : onAbort(signal, done);
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      stopWaiting?.();
      resolve();
    }
  });
}
