/** Where a supervised stream is. */
export type StreamState =
  | { readonly kind: "connecting"; readonly attempt: number }
  | { readonly kind: "live" }
  | { readonly kind: "waiting"; readonly attempt: number; readonly retryAt: number; readonly error: unknown }
  | { readonly kind: "stopped"; readonly error?: unknown };

/** First wait before reopening a broken stream; doubles per failed attempt. */
export const RETRY_INITIAL_MS = 250;
/** Longest wait between attempts: a returning Hub is noticed within this long. */
export const RETRY_MAX_MS = 10_000;
/** Spread of each wait (±20 %), so many tabs do not hit a restarted Hub at the same instant. */
const RETRY_JITTER = 0.2;

/** What a supervisor runs. */
export interface StreamSupervisorOptions<T> {
  /** Opens the stream; it must end (or throw) when `signal` aborts. */
  open(signal: AbortSignal): AsyncIterable<T>;
  /** Handles one message; returning "stop" ends supervision (the stream's work is done). */
  onMessage(message: T): undefined | "stop";
  /** Told about every change of state. */
  onState?(state: StreamState): void;
  /** Errors retrying cannot fix (a refused login): supervision stops with the error. */
  isFatal?(error: unknown): boolean;
  /**
   * Longest silence accepted on an open stream before it is treated as dead and reopened. The servers
   * send heartbeats, so silence means a half-open connection (a sleeping laptop, a changed network).
   */
  readonly livenessMs: number;
  /** For tests: the delay before attempt `n` (0-based). */
  readonly retryDelay?: (attempt: number) => number;
}

/** The default delay before retry attempt `n`: 250 ms doubling to 10 s, with jitter. */
export function retryDelay(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(RETRY_MAX_MS, RETRY_INITIAL_MS * 2 ** Math.min(attempt, 16));
  return Math.round(base * (1 - RETRY_JITTER + 2 * RETRY_JITTER * random()));
}

/**
 * Keeps one server stream open: reopens it with backoff when it fails or ends, treats silence longer
 * than `livenessMs` as a dead connection, and reopens at once on `reconnectNow` (wake from sleep, a page
 * restored from the back/forward cache, the network coming back). Messages of an abandoned stream are
 * never delivered, so a reopened stream cannot interleave with the old one.
 */
export class StreamSupervisor<T> {
  private generation = 0;
  private running = false;
  private attempt = 0;
  private controller: AbortController | undefined;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private livenessTimer: ReturnType<typeof setTimeout> | undefined;
  private current: StreamState = { kind: "stopped" };

  constructor(private readonly options: StreamSupervisorOptions<T>) {}

  get state(): StreamState {
    return this.current;
  }

  get isRunning(): boolean {
    return this.running;
  }

  /** Opens the stream (once; later calls while running do nothing). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.attempt = 0;
    void this.connect();
  }

  /** Closes the stream for good. */
  stop(error?: unknown): void {
    if (!this.running && this.current.kind === "stopped") return;
    this.running = false;
    this.abandon();
    this.setState(error === undefined ? { kind: "stopped" } : { kind: "stopped", error });
  }

  /** Drops the current stream (or pending retry) and opens a new one now. */
  reconnectNow(): void {
    if (!this.running) return;
    this.abandon();
    this.attempt = 0;
    void this.connect();
  }

  private async connect(): Promise<void> {
    const generation = ++this.generation;
    const controller = new AbortController();
    this.controller = controller;
    this.setState({ kind: "connecting", attempt: this.attempt });
    this.armLiveness(generation);
    let live = false;
    try {
      for await (const message of this.options.open(controller.signal)) {
        if (generation !== this.generation) return;
        this.armLiveness(generation);
        if (!live) {
          live = true;
          this.attempt = 0;
          this.setState({ kind: "live" });
        }
        if (this.options.onMessage(message) === "stop") {
          this.stop();
          return;
        }
      }
      if (generation !== this.generation) return;
      this.scheduleRetry(new Error("the stream ended"));
    } catch (error) {
      if (generation !== this.generation) return;
      if (this.options.isFatal?.(error)) {
        this.stop(error);
        return;
      }
      this.scheduleRetry(error);
    }
  }

  private scheduleRetry(error: unknown): void {
    this.abandon();
    if (!this.running) return;
    const attempt = this.attempt++;
    const delay = (this.options.retryDelay ?? retryDelay)(attempt);
    const generation = this.generation;
    this.setState({ kind: "waiting", attempt: attempt + 1, retryAt: Date.now() + delay, error });
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (this.running && generation === this.generation) void this.connect();
    }, delay);
  }

  private armLiveness(generation: number): void {
    if (this.livenessTimer !== undefined) clearTimeout(this.livenessTimer);
    this.livenessTimer = setTimeout(() => {
      this.livenessTimer = undefined;
      if (this.running && generation === this.generation) {
        this.scheduleRetry(new Error(`no message or heartbeat for ${Math.round(this.options.livenessMs / 1000)} s`));
      }
    }, this.options.livenessMs);
  }

  /** Forgets the current stream: its messages and errors are ignored from now on. */
  private abandon(): void {
    this.generation++;
    this.controller?.abort();
    this.controller = undefined;
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    if (this.livenessTimer !== undefined) clearTimeout(this.livenessTimer);
    this.retryTimer = undefined;
    this.livenessTimer = undefined;
  }

  private setState(state: StreamState): void {
    this.current = state;
    this.options.onState?.(state);
  }
}
