/**
 * One connection as the budget sees it: who it is from, whether it has authenticated, whether a
 * request is in flight, and how to end it.
 */
export interface BudgetedConnection {
  readonly peer: string;
  /** True once a request on it carried valid credentials. */
  readonly trusted: boolean;
  /** True while a request (HTTP/1.1) or stream (HTTP/2) is open on it. */
  busy(): boolean;
  /** Closes it at once. */
  drop(): void;
}

/** How many connections may be open, in all and unauthenticated. */
export interface BudgetLimits {
  /** Most connections from one peer address. */
  readonly maxConnectionsPerPeer: number;
  /** Most connections in all. */
  readonly maxConnections: number;
  /** Most unauthenticated connections from one peer address: a smaller budget of their own. */
  readonly maxUnauthenticatedPerPeer: number;
  /** Most unauthenticated connections in all. */
  readonly maxUnauthenticated: number;
}

/** Why `admit` refused a connection, for the log. */
export type Refusal = "peer" | "total";

/**
 * The connection caps, with unauthenticated connections on a budget of their own: they are the ones
 * dropped (idle first, oldest first) when a new connection needs room, so a local process that holds
 * hundreds of idle connections, or opens them as fast as it can, cannot keep the rightful user (whose
 * connections authenticate with their first request) from connecting. A new connection is itself
 * unauthenticated; it is refused only when every connection it would displace is authenticated.
 */
export class ConnectionBudget<C extends BudgetedConnection> {
  private readonly open = new Set<C>();
  private readonly perPeer = new Map<string, number>();
  /** Unauthenticated connections, oldest first (insertion order), in all and per peer. */
  private readonly untrusted = new Set<C>();
  private readonly untrustedPerPeer = new Map<string, Set<C>>();
  /** Unauthenticated connections dropped to make room so far (for tests and logs). */
  evicted = 0;

  constructor(private readonly limits: BudgetLimits) {}

  /** Connections open. */
  get size(): number {
    return this.open.size;
  }

  /** Open connections of `peer`. */
  countOf(peer: string): number {
    return this.perPeer.get(peer) ?? 0;
  }

  /** Unauthenticated connections open. */
  get unauthenticated(): number {
    return this.untrusted.size;
  }

  /**
   * Makes room for a new unauthenticated connection from `peer` by dropping others that are
   * unauthenticated, and admits it; answers why when no room could be made (it is not admitted).
   */
  admit(connection: C): Refusal | undefined {
    const peer = connection.peer;
    const peerUntrusted = () => this.untrustedPerPeer.get(peer) ?? new Set<C>();
    while (
      this.countOf(peer) >= this.limits.maxConnectionsPerPeer ||
      peerUntrusted().size >= this.limits.maxUnauthenticatedPerPeer
    ) {
      if (!this.dropOne(peerUntrusted())) return "peer";
    }
    while (this.open.size >= this.limits.maxConnections || this.untrusted.size >= this.limits.maxUnauthenticated) {
      if (!this.dropOne(this.untrusted)) return "total";
    }
    this.open.add(connection);
    this.perPeer.set(peer, this.countOf(peer) + 1);
    this.untrusted.add(connection);
    const set = this.untrustedPerPeer.get(peer) ?? new Set<C>();
    this.untrustedPerPeer.set(peer, set);
    set.add(connection);
    return undefined;
  }

  /** Moves a connection out of the unauthenticated budget: it authenticated. */
  trusted(connection: C): void {
    this.forgetUntrusted(connection);
  }

  /** Forgets a closed connection. */
  closed(connection: C): void {
    if (!this.open.delete(connection)) return;
    const left = this.countOf(connection.peer) - 1;
    if (left <= 0) this.perPeer.delete(connection.peer);
    else this.perPeer.set(connection.peer, left);
    this.forgetUntrusted(connection);
  }

  private forgetUntrusted(connection: C): void {
    this.untrusted.delete(connection);
    const set = this.untrustedPerPeer.get(connection.peer);
    set?.delete(connection);
    if (set?.size === 0) this.untrustedPerPeer.delete(connection.peer);
  }

  /** Drops the oldest idle connection of `from`, else its oldest; false when `from` is empty. */
  private dropOne(from: ReadonlySet<C>): boolean {
    let victim: C | undefined;
    for (const c of from) {
      if (!c.busy()) {
        victim = c;
        break;
      }
      victim ??= c;
    }
    if (!victim) return false;
    // Counted as gone now: its socket closes asynchronously.
    this.closed(victim);
    this.evicted++;
    victim.drop();
    return true;
  }
}
