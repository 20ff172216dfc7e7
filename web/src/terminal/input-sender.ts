/** Most bytes one SendInput call carries (the contract's limit); a larger paste goes in several calls. */
export const MAX_INPUT_BYTES = 64 * 1024;
/**
 * Typed bytes held while no attachment is confirmed (connecting, reconnecting). A person cannot type
 * this much; a paste larger than this while disconnected is refused rather than held without bound.
 */
export const MAX_HELD_INPUT_BYTES = 256 * 1024;
/** Retries of one call that failed on the way (the same sequence, so the server types it at most once). */
const SEND_RETRIES = 4;
/** First wait before retrying a call; doubles per retry. */
const SEND_RETRY_MS = 100;

/** Calls SendInput; rejects with the call's error. */
export type SendInput = (attachmentId: string, sequence: number, data: Uint8Array) => Promise<void>;

/** What the sender reports. */
export interface InputSenderEvents {
  /** Bytes that may not have reached the session (their attachment ended while they were on the way). */
  lost(bytes: number, error: unknown): void;
  /** Bytes refused because too much was held while disconnected. */
  refused(bytes: number): void;
}

/**
 * Orders a viewer's keystrokes into SendInput calls: one call in flight at a time, with sequence
 * numbers 1, 2, ... per attachment; keys typed while a call is in flight go out together in the next
 * call. Nothing is sent before an attachment is confirmed, and bytes queued for one attachment are sent
 * to its successor after a reconnect (the same session), never to another session: each session view
 * has its own sender. A call that fails on the way is retried with the same sequence number (the server
 * types each sequence once); if its attachment is gone, its bytes are reported lost, not guessed about.
 */
export class InputSender {
  private attachmentId: string | undefined;
  private sequence = 0;
  private readonly queue: Uint8Array[] = [];
  private queuedBytes = 0;
  private inFlight = false;
  private closed = false;
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly send: SendInput,
    private readonly events: InputSenderEvents,
    private readonly isRetriable: (error: unknown) => boolean,
  ) {}

  /** Bytes typed and not yet sent. */
  get pendingBytes(): number {
    return this.queuedBytes;
  }

  /** True while a call is on its way. */
  get busy(): boolean {
    return this.inFlight;
  }

  /** A new attachment is confirmed: its sequence starts at 1 and held input goes out. */
  attached(attachmentId: string): void {
    this.attachmentId = attachmentId;
    this.sequence = 0;
    void this.pump();
  }

  /** The attachment ended: hold input until the next one. */
  detached(): void {
    this.attachmentId = undefined;
  }

  /** Queues typed bytes. */
  push(data: Uint8Array): void {
    if (this.closed || data.length === 0) return;
    if (this.attachmentId === undefined && this.queuedBytes + data.length > MAX_HELD_INPUT_BYTES) {
      this.events.refused(data.length);
      return;
    }
    this.queue.push(data);
    this.queuedBytes += data.length;
    void this.pump();
  }

  /** Stops sending; held bytes are dropped (their session view is gone). */
  close(): void {
    this.closed = true;
    this.queue.length = 0;
    this.queuedBytes = 0;
    this.attachmentId = undefined;
    this.settleIdle();
  }

  /** Resolves once nothing is queued or in flight. */
  idle(): Promise<void> {
    if (!this.inFlight && (this.queuedBytes === 0 || this.attachmentId === undefined)) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private async pump(): Promise<void> {
    while (!this.inFlight && !this.closed && this.attachmentId !== undefined && this.queuedBytes > 0) {
      const id = this.attachmentId;
      const data = this.take(MAX_INPUT_BYTES);
      const sequence = ++this.sequence;
      this.inFlight = true;
      try {
        await this.deliver(id, sequence, data);
      } finally {
        this.inFlight = false;
      }
    }
    if (!this.inFlight) this.settleIdle();
  }

  private async deliver(id: string, sequence: number, data: Uint8Array): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.send(id, sequence, data);
        return;
      } catch (error) {
        const sameAttachment = this.attachmentId === id && !this.closed;
        if (!sameAttachment || !this.isRetriable(error) || attempt >= SEND_RETRIES) {
          this.events.lost(data.length, error);
          return;
        }
        await new Promise((r) => setTimeout(r, SEND_RETRY_MS * 2 ** attempt));
        if (this.attachmentId !== id || this.closed) {
          this.events.lost(data.length, error);
          return;
        }
      }
    }
  }

  private take(max: number): Uint8Array {
    let size = 0;
    let count = 0;
    for (const chunk of this.queue) {
      if (size > 0 && size + chunk.length > max) break;
      size += chunk.length;
      count++;
      if (size >= max) break;
    }
    const parts = this.queue.splice(0, count);
    let out: Uint8Array;
    if (parts.length === 1 && parts[0]) {
      out = parts[0];
    } else {
      out = new Uint8Array(size);
      let offset = 0;
      for (const p of parts) {
        out.set(p, offset);
        offset += p.length;
      }
    }
    if (out.length > max) {
      // One chunk larger than a call: send its head now and put the rest back in front.
      this.queue.unshift(out.subarray(max));
      out = out.subarray(0, max);
    }
    this.queuedBytes -= out.length;
    return out;
  }

  private settleIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }
}
