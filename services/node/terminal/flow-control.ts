import { MAX_UNACKED_CHUNKS } from "./limits.js";

/** What a flow controller is built from. */
export interface FlowControlOptions {
  /** Unacknowledged bytes above which the source is paused. */
  readonly highWatermark: number;
  /** Unacknowledged bytes below which a paused source resumes. */
  readonly lowWatermark: number;
  /** Stops reading the source (the pty). */
  readonly pause: () => void;
  /** Reads the source again. */
  readonly resume: () => void;
}

/**
 * Output flow control by watermarks with viewer acknowledgements (as VS Code's terminal does): every
 * byte read from the pty counts as unacknowledged until the viewer acknowledges the chunk that
 * carried it. Above the high watermark the pty is paused, so tmux stops writing to that client and a
 * viewer that stops reading costs a bounded amount of memory; below the low one it resumes.
 */
export class OutputFlowControl {
  private produced = 0;
  private sentEnd = 0;
  private acked = 0;
  private lastAckedSequence = 0;
  /** Sent chunks not yet acknowledged: their sequence and the byte offset where each ends. */
  private readonly marks: Array<{ readonly sequence: number; readonly end: number }> = [];
  private pausedNow = false;

  constructor(private readonly options: FlowControlOptions) {}

  /** Bytes read from the source and not yet acknowledged (queued or in flight). */
  get unacknowledged(): number {
    return this.produced - this.acked;
  }

  /** True while the source is paused. */
  get paused(): boolean {
    return this.pausedNow;
  }

  /** Counts bytes read from the source. */
  received(bytes: number): void {
    this.produced += bytes;
    this.check();
  }

  /** Records that chunk `sequence` carrying `bytes` went to the viewer. */
  sent(sequence: number, bytes: number): void {
    this.sentEnd += bytes;
    this.marks.push({ sequence, end: this.sentEnd });
    this.check();
  }

  /**
   * The viewer processed every chunk up to `sequence`. Stale or repeated acknowledgements change
   * nothing; one beyond what was sent acknowledges what was sent.
   */
  ack(sequence: number): void {
    if (sequence <= this.lastAckedSequence) return;
    let end = -1;
    while (this.marks.length > 0 && (this.marks[0]?.sequence ?? Number.POSITIVE_INFINITY) <= sequence) {
      end = this.marks.shift()?.end ?? end;
    }
    this.lastAckedSequence = sequence;
    if (end >= 0) this.acked = end;
    this.check();
  }

  private check(): void {
    const over = this.unacknowledged > this.options.highWatermark || this.marks.length > MAX_UNACKED_CHUNKS;
    if (!this.pausedNow && over) {
      this.pausedNow = true;
      this.options.pause();
    } else if (
      this.pausedNow &&
      this.unacknowledged < this.options.lowWatermark &&
      this.marks.length < MAX_UNACKED_CHUNKS
    ) {
      this.pausedNow = false;
      this.options.resume();
    }
  }
}
