/**
 * How old the watch loop's model may be and still answer reads. The loop looks at least every
 * WATCH_IDLE_INTERVAL_MS (2 s, sooner when anything changes); a model older than twice that means the
 * loop is stuck (a wedged tmux, a starved machine), and reads go to tmux themselves.
 */
export const MODEL_MAX_AGE_MS = 4_000;

/**
 * How much a read covers: `full` reads tmux and the native state; `logs` only the native state, over
 * the panes of the last full read (the watch loop's look woken by log writes alone, watch-loop.ts).
 */
export type ReadKind = "full" | "logs";

/** What ModelReads needs from its machine. */
export interface ModelReadsOptions<M> {
  /** Reads tmux and the native state once (the expensive part: 100 ms to 1.3 s at 300 sessions). */
  readonly read: (kind: ReadKind) => Promise<M>;
  /** True while the machine's watch loop runs, so that its model stays fresh by itself. */
  readonly live: () => boolean;
  /** Overrides MODEL_MAX_AGE_MS (tests). */
  readonly maxAgeMs?: number;
  /** The clock (tests). */
  readonly now?: () => number;
}

/** One read and what it covers. */
interface ModelRead<M> {
  readonly promise: Promise<M>;
  /** The change count when the read began: it sees every change made through the API before that. */
  readonly generation: number;
  readonly kind: ReadKind;
}

/**
 * Decides when a machine re-reads tmux and when the model it already has may answer. Every
 * ListSessions, GetSession and chat send used to read tmux and the status of every session, which at
 * 300 sessions costs 100 ms to 1.3 s each, the same work the watch loop does anyway while anyone watches.
 *
 * - `current()` (API reads): the newest model while the watch loop runs and the model is fresh, else a
 *   read. A change made through the API (`changed()`) makes the model stale at once, so a read after
 *   CreateSession or StopSession always sees it.
 * - `refresh()` (the watch loop, and reads that need tmux now): concurrent callers share one read; a
 *   read that began before the latest API change, or a `logs` read where tmux is wanted, is not
 *   reused, but waited for and followed by one more, so reads never overlap (the later read always
 *   publishes last).
 */
export class ModelReads<M> {
  private readonly maxAgeMs: number;
  private readonly now: () => number;
  private generation = 0;
  private running: ModelRead<M> | undefined;
  /** A read queued behind a running one that began before the latest change; callers share it. */
  private pending: Promise<M> | undefined;
  private latest: { readonly value: M; readonly generation: number; readonly startedAt: number } | undefined;

  constructor(private readonly options: ModelReadsOptions<M>) {
    this.maxAgeMs = options.maxAgeMs ?? MODEL_MAX_AGE_MS;
    this.now = options.now ?? Date.now;
  }

  /** A change through the API (a session created, stopped, adopted, a turn marked seen): reads must see it. */
  changed(): void {
    this.generation++;
  }

  /** The model for an API read: the watch loop's while it is fresh, else a read (shared with any in flight). */
  current(): Promise<M> {
    const latest = this.latest;
    if (
      latest &&
      latest.generation === this.generation &&
      this.now() - latest.startedAt <= this.maxAgeMs &&
      this.options.live()
    ) {
      return Promise.resolve(latest.value);
    }
    return this.refresh();
  }

  /**
   * A read that covers every change made so far; concurrent callers share it. `logs` (the watch loop
   * only) may be answered by a full read; a full one never by a `logs` read.
   */
  refresh(kind: ReadKind = "full"): Promise<M> {
    const running = this.running;
    if (running && running.generation === this.generation && (running.kind === "full" || kind === "logs")) {
      return running.promise;
    }
    if (this.pending) return this.pending;
    if (!running) return this.start(kind);
    return this.afterRunning(running);
  }

  /**
   * A read that begins after every read in flight (the watch loop's look): the loop is woken by a
   * change, a log written, that a read already running may have passed by; sharing that read would
   * leave the change unseen until the loop's next timed look. Shares only a read queued behind it.
   */
  next(kind: ReadKind): Promise<M> {
    const running = this.running;
    if (this.pending) return this.pending;
    return running ? this.afterRunning(running) : this.start(kind);
  }

  /** A full read queued behind `running`, shared by every caller until it starts. */
  private afterRunning(running: ModelRead<M>): Promise<M> {
    const pending = running.promise
      .catch(() => undefined)
      .then(() => {
        this.pending = undefined;
        return this.start("full");
      });
    this.pending = pending;
    return pending;
  }

  private start(kind: ReadKind): Promise<M> {
    const generation = this.generation;
    const startedAt = this.now();
    const promise: Promise<M> = this.options
      .read(kind)
      .then((value) => {
        if (!this.latest || this.latest.startedAt <= startedAt) this.latest = { value, generation, startedAt };
        return value;
      })
      .finally(() => {
        if (this.running?.promise === promise) this.running = undefined;
      });
    this.running = { promise, generation, kind };
    return promise;
  }
}
