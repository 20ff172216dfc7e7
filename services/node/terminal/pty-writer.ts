import { write } from "node:fs";

/** How long a write waits before trying again when the terminal's input buffer is full. */
const FULL_RETRY_MS = 5;

interface Chunk {
  readonly data: Buffer;
  offset: number;
  readonly done: Promise<void>;
  readonly resolve: () => void;
  readonly reject: (err: Error) => void;
}

/**
 * Writes a viewer's keystrokes to a pty's master side in order, and says when they are in the kernel:
 * node-pty's own `write` queues bytes and returns before they are written, so a caller could not tell
 * typed keys from keys still in this process (and a detach right after would lose them). Written here
 * because node-pty exposes no completion for a write.
 */
export class PtyWriter {
  private readonly queue: Chunk[] = [];
  private stoppedWith: Error | undefined;
  private retry: NodeJS.Timeout | undefined;
  /** The last byte handed to the kernel, and when. */
  private lastByte: number | undefined;
  private lastWrittenAt = 0;

  constructor(private readonly fd: number) {}

  /** Resolves once every byte of `data` (and of every earlier write) is in the terminal's input. */
  write(data: Buffer): Promise<void> {
    if (this.stoppedWith) return Promise.reject(this.stoppedWith);
    if (data.length === 0) return this.drained();
    let resolve: () => void = () => {};
    let reject: (err: Error) => void = () => {};
    const done = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // The caller handles the rejection; drained() must not turn it into an unhandled one.
    done.catch(() => undefined);
    this.queue.push({ data, offset: 0, done, resolve, reject });
    if (this.queue.length === 1) this.next();
    return done;
  }

  /** Settles once everything written so far is in the kernel or has failed. */
  drained(): Promise<void> {
    const last = this.queue.at(-1);
    return last ? last.done.then(noop, noop) : Promise.resolve();
  }

  /** The last byte written and when (0 before any): a lone Escape is held by tmux for a moment. */
  get last(): { byte: number | undefined; at: number } {
    return { byte: this.lastByte, at: this.lastWrittenAt };
  }

  /** Fails what is still queued and every later write with `reason` (the pty has ended). */
  stop(reason: Error): void {
    this.stoppedWith ??= reason;
    clearTimeout(this.retry);
    for (const chunk of this.queue.splice(0)) chunk.reject(reason);
  }

  private next(): void {
    const chunk = this.queue[0];
    if (!chunk || this.stoppedWith) return;
    write(this.fd, chunk.data, chunk.offset, chunk.data.length - chunk.offset, null, (err, written) => {
      if (this.stoppedWith || this.queue[0] !== chunk) return;
      if (err) {
        if (err.code === "EAGAIN") {
          this.retry = setTimeout(() => this.next(), FULL_RETRY_MS);
          return;
        }
        this.stop(err);
        return;
      }
      chunk.offset += written;
      if (written > 0) {
        this.lastByte = chunk.data[chunk.offset - 1];
        this.lastWrittenAt = Date.now();
      }
      if (chunk.offset >= chunk.data.length) {
        this.queue.shift();
        chunk.resolve();
      }
      this.next();
    });
  }
}

function noop(): void {}
