import { Code, ConnectError } from "@connectrpc/connect";

/** What an input sequencer is built from. */
export interface InputSequencerOptions {
  /**
   * Types bytes into the terminal; called strictly in sequence order, once per sequence number. It
   * returns a promise when the typing takes time (the bytes wait behind the session's input lock while
   * a chat message or a prompt's answer is typed, or for room in the terminal); the calls are then
   * acknowledged once it settles.
   */
  readonly write: (data: Uint8Array) => Promise<void> | undefined;
  /** How long an input ahead of a gap waits for the missing ones. */
  readonly gapWaitMs: number;
  /** Inputs that may wait for a gap at once. */
  readonly maxPending: number;
}

interface PendingInput {
  readonly data: Uint8Array;
  readonly waiters: Array<{ resolve: (applied: number) => void; reject: (err: unknown) => void }>;
  readonly timer: NodeJS.Timeout;
}

/**
 * Applies SendInput calls in sequence order, so keystrokes sent as concurrent requests (which HTTP may
 * deliver out of order) are typed as the viewer typed them. A sequence already applied is
 * acknowledged without typing again (a retried call is harmless). A call ahead of a gap waits up to
 * `gapWaitMs` for the missing calls; if they do not come it fails with FAILED_PRECONDITION and types
 * nothing, so input is never typed out of order: the viewer should reattach.
 */
export class InputSequencer {
  private appliedSequence = 0;
  private readonly pending = new Map<number, PendingInput>();
  private closedWith: ConnectError | undefined;
  /** The last write that waits to be typed, if one does. */
  private typing: Promise<void> | undefined;

  constructor(private readonly options: InputSequencerOptions) {}

  /** The highest sequence number typed so far. */
  get applied(): number {
    return this.appliedSequence;
  }

  /** Types `data` as input number `sequence` (1, 2, ...) in order; resolves with the applied sequence. */
  submit(sequence: number, data: Uint8Array): Promise<number> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    if (sequence <= this.appliedSequence) return this.acknowledged();
    if (sequence === this.appliedSequence + 1) {
      this.apply(sequence, data);
      this.drain();
      return this.acknowledged();
    }
    return new Promise<number>((resolve, reject) => {
      const existing = this.pending.get(sequence);
      if (existing) {
        existing.waiters.push({ resolve, reject });
        return;
      }
      if (this.pending.size >= this.options.maxPending) {
        reject(
          new ConnectError(
            `input ${sequence} is ahead of input ${this.appliedSequence + 1}, and ${this.pending.size} inputs already wait for the gap`,
            Code.ResourceExhausted,
          ),
        );
        return;
      }
      const timer = setTimeout(() => {
        const entry = this.pending.get(sequence);
        if (!entry) return;
        this.pending.delete(sequence);
        const err = new ConnectError(
          `input ${sequence} waited ${this.options.gapWaitMs} ms for input ${this.appliedSequence + 1}, which never came; nothing was typed out of order: reattach to continue`,
          Code.FailedPrecondition,
        );
        for (const w of entry.waiters) w.reject(err);
      }, this.options.gapWaitMs);
      this.pending.set(sequence, { data, waiters: [{ resolve, reject }], timer });
    });
  }

  /** Fails every waiting input and every later call with `reason` (the attachment ended). */
  close(reason: ConnectError): void {
    this.closedWith = reason;
    for (const entry of this.pending.values()) {
      clearTimeout(entry.timer);
      for (const w of entry.waiters) w.reject(reason);
    }
    this.pending.clear();
  }

  /** Resolves with the applied sequence once every write so far has been typed. */
  private acknowledged(): Promise<number> {
    const applied = this.appliedSequence;
    const typing = this.typing;
    return typing ? typing.then(() => applied) : Promise.resolve(applied);
  }

  private apply(sequence: number, data: Uint8Array): void {
    const typing = this.options.write(data);
    if (typing) {
      this.typing = typing;
      void typing.then(
        () => {
          if (this.typing === typing) this.typing = undefined;
        },
        () => {
          if (this.typing === typing) this.typing = undefined;
        },
      );
    }
    this.appliedSequence = sequence;
  }

  private drain(): void {
    const done: PendingInput[] = [];
    for (;;) {
      const next = this.pending.get(this.appliedSequence + 1);
      if (!next) break;
      this.pending.delete(this.appliedSequence + 1);
      clearTimeout(next.timer);
      this.apply(this.appliedSequence + 1, next.data);
      done.push(next);
    }
    if (done.length === 0) return;
    const acknowledged = this.acknowledged();
    for (const entry of done) for (const w of entry.waiters) acknowledged.then(w.resolve, w.reject);
  }
}
