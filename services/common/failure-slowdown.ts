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
  /**
   * Failures held back at once in all (each holds a timer and its request): a small queue. Past it,
   * or past `maxHeldPerPeer`, a failure that should wait is refused at once as an overflow (its
   * caller drops the connection), so waiting failures never hold more than the queue.
   */
  readonly maxHeldFailures: number;
  /** Failures of one peer held back at once. */
  readonly maxHeldPerPeer: number;
  /**
   * Failures answered per second in all, whatever their addresses (loopback alone has 16 million):
   * past `globalBurst` at once, failures wait for their turn in this budget too.
   */
  readonly globalFailuresPerSecond: number;
  /** Failures of all peers answered at once before the global budget makes them wait. */
  readonly globalBurst: number;
}

/** How a failure was answered. */
export interface FailureOutcome {
  /** This failure's number within its peer's window, for logs. */
  readonly count: number;
  /** True when it should have waited but the queue was full: refuse it at once and drop its connection. */
  readonly overflow: boolean;
}

/**
 * The server's slowdown: after 5 quick tries, a peer's failures are answered at most one every 250 ms,
 * 500 ms, ... and then every 5 s, and all peers' together at most 20 a second, so guessing even a
 * short token takes years, while a typo costs nothing and the right token is never delayed.
 */
export const DEFAULT_SLOWDOWN: SlowdownOptions = {
  freeFailures: 5,
  firstDelayMs: 250,
  maxDelayMs: 5_000,
  memoryMs: 60_000,
  maxTrackedPeers: 10_000,
  maxHeldFailures: 256,
  maxHeldPerPeer: 8,
  // A person mistyping makes a few failures a minute; a guesser from many addresses gets 20 a second.
  globalFailuresPerSecond: 20,
  globalBurst: 40,
};

interface PeerFailures {
  count: number;
  last: number;
  /** When this peer's latest held failure is answered: failures are answered one after another. */
  nextAnswer: number;
  /** This peer's failures held right now. */
  held: number;
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
  /** When the global budget's latest failure is answered (a leaky bucket of `globalBurst`). */
  private globalNext = 0;

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
   * Records a failure by `peer` and resolves when it may be answered: at once for the free ones,
   * after the peer's wait and the global budget's otherwise, or when `signal` aborts (a caller that
   * went away needs no answer). An overflow (the queue is full) resolves at once and does not use up
   * the peer's or the global budget.
   */
  failed(peer: string, signal?: AbortSignal): Promise<FailureOutcome> {
    const now = Date.now();
    let entry = this.peers.get(peer);
    if (!entry || now - entry.last > this.options.memoryMs) entry = { count: 0, last: now, nextAnswer: now, held: 0 };
    entry.count++;
    entry.last = now;
    // Most recently failing last: the first key is the one to forget.
    this.peers.set(peer, entry);
    const count = entry.count;
    const interval = 1000 / this.options.globalFailuresPerSecond;
    const globalNext = Math.max(now - this.options.globalBurst * interval, this.globalNext) + interval;
    const over = count - this.options.freeFailures;
    const peerNext =
      over <= 0
        ? now
        : Math.max(now, entry.nextAnswer) +
          Math.min(this.options.maxDelayMs, this.options.firstDelayMs * 2 ** Math.min(over - 1, 30));
    const answer = Math.max(peerNext, globalNext - interval);
    if (answer <= now || signal?.aborted) {
      this.globalNext = globalNext;
      return Promise.resolve({ count, overflow: false });
    }
    if (this.held >= this.options.maxHeldFailures || entry.held >= this.options.maxHeldPerPeer) {
      return Promise.resolve({ count, overflow: true });
    }
    this.globalNext = globalNext;
    if (over > 0) entry.nextAnswer = peerNext;
    this.held++;
    entry.held++;
    const held = entry;
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        this.held--;
        held.held--;
        resolve({ count, overflow: false });
      };
      const timer = setTimeout(done, answer - now);
      signal?.addEventListener("abort", done, { once: true });
    });
  }
}
