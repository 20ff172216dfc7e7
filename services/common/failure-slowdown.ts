import { BoundedMap } from "./bounded-map.js";
/** How failed authentication is slowed down. */
export interface SlowdownOptions {
  /** Failures a peer may make, in its memory window, that are answered at once (typos). */
  readonly freeFailures: number;
  /** The wait of the first failure past the free ones; each further failure doubles it. */
  readonly firstDelayMs: number;
  /** The longest wait between two answered failures of one peer. */
  readonly maxDelayMs: number;
  /** A peer without a failure for this long starts afresh. */
  readonly memoryMs: number;
  /** Peers remembered at once; the least recently failing are forgotten first (bounded memory). */
  readonly maxTrackedPeers: number;
  /** Failures held back at once in all (each holds a timer); past it they are answered at once. */
  readonly maxHeldFailures: number;
}

/**
 * The server's slowdown: after 5 quick tries, a peer's failures are answered at most one every 250 ms,
 * 500 ms, ... and then every 5 s, so guessing even a short token takes years, while a typo costs
 * nothing and the right token is never delayed.
 */
export const DEFAULT_SLOWDOWN: SlowdownOptions = {
  freeFailures: 5,
  firstDelayMs: 250,
  maxDelayMs: 5_000,
  memoryMs: 60_000,
  maxTrackedPeers: 10_000,
  maxHeldFailures: 10_000,
};

interface PeerFailures {
  count: number;
  last: number;
  /** When this peer's latest held failure is answered: failures are answered one after another. */
  nextAnswer: number;
}

/**
 * Slows down failed authentication per peer address instead of blocking it: each failure past the
 * free ones is answered only after a wait that doubles with the peer's recent failures, and a peer's
 * failures are answered one after another, so parallel guesses are no faster than serial ones. Only
 * failures wait: a caller with the right credentials is never checked against this, so others'
 * failures (another process on the same address, a flood) can never lock it out. The login page and
 * the RPC interceptor share one instance.
 */
export class FailureSlowdown {
  private readonly options: SlowdownOptions;
  private readonly peers: BoundedMap<string, PeerFailures>;
  private held = 0;

  constructor(options: Partial<SlowdownOptions> = {}) {
    this.options = { ...DEFAULT_SLOWDOWN, ...options };
    this.peers = new BoundedMap(this.options.maxTrackedPeers);
  }

  /** Failures waiting for their answer right now. */
  get heldFailures(): number {
    return this.held;
  }

  /** Peers currently remembered. */
  get trackedPeers(): number {
    return this.peers.size;
  }

  /**
   * Records a failure by `peer` and resolves when it may be answered (at once for the free ones, or
   * when `signal` aborts: a caller that went away needs no answer). Resolves with this failure's
   * number within the peer's window, for logs.
   */
  failed(peer: string, signal?: AbortSignal): Promise<number> {
    const now = Date.now();
    let entry = this.peers.get(peer);
    if (!entry || now - entry.last > this.options.memoryMs) entry = { count: 0, last: now, nextAnswer: now };
    entry.count++;
    entry.last = now;
    // Most recently failing last: the first key is the one to forget.
    this.peers.set(peer, entry);
    const count = entry.count;
    const over = count - this.options.freeFailures;
    if (over <= 0) return Promise.resolve(count);
    const delay = Math.min(this.options.maxDelayMs, this.options.firstDelayMs * 2 ** Math.min(over - 1, 30));
    entry.nextAnswer = Math.max(now, entry.nextAnswer) + delay;
    if (this.held >= this.options.maxHeldFailures || signal?.aborted) return Promise.resolve(count);
    this.held++;
    const wait = entry.nextAnswer - now;
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        this.held--;
        resolve(count);
      };
      const timer = setTimeout(done, wait);
      signal?.addEventListener("abort", done, { once: true });
    });
  }
}
