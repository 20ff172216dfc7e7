import { type Session, SessionStatus } from "../../../gen/staragent/v1/session_pb.js";
import { WatchEventType, type WatchSessionsResponse } from "../../../gen/staragent/v1/session_service_pb.js";

/** What one WatchSessions event changed, for listeners that react to transitions (notifications). */
export interface StoreChange {
  /** Sessions that appeared or changed, with their state before the event (undefined when new). */
  readonly changed: ReadonlyArray<{ readonly session: Session; readonly before: Session | undefined }>;
  /** Resource names of sessions that are gone. */
  readonly removed: readonly string[];
  /** True for the first snapshot of this page: nothing in it is news. */
  readonly initial: boolean;
}

/**
 * The sessions of every node as the Hub's WatchSessions stream describes them. It holds exactly what the
 * stream said: statuses are never derived or guessed here. A SNAPSHOT replaces everything (after a
 * reconnect too), UPSERTED and UNREACHABLE_CHANGED replace the sessions they carry, REMOVED drops them.
 * DOM-free, so it can be tested and measured on its own.
 */
export class SessionStore {
  private readonly byName = new Map<string, Session>();
  private readonly unreachableNodes = new Set<string>();
  private readonly listeners = new Set<(change: StoreChange) => void>();
  private snapshotSeen = false;
  /** Increases with every applied event that changed something; views compare it to skip work. */
  version = 0;

  /** True once the first snapshot arrived. */
  get loaded(): boolean {
    return this.snapshotSeen;
  }

  /** Every session, in no particular order. */
  all(): IterableIterator<Session> {
    return this.byName.values();
  }

  get size(): number {
    return this.byName.size;
  }

  get(name: string): Session | undefined {
    return this.byName.get(name);
  }

  /** Resource names (`nodes/{node}`) of nodes the Hub cannot reach right now. */
  get unreachable(): ReadonlySet<string> {
    return this.unreachableNodes;
  }

  /** Sessions in REVIEW, for the title, the favicon and the filter counts. */
  reviewCount(): number {
    let n = 0;
    for (const s of this.byName.values()) if (s.status === SessionStatus.REVIEW) n++;
    return n;
  }

  /** Calls `listener` after every event that changed something; returns the unsubscribe function. */
  subscribe(listener: (change: StoreChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Folds one event of the stream in. */
  apply(event: WatchSessionsResponse): void {
    switch (event.type) {
      case WatchEventType.SNAPSHOT: {
        const initial = !this.snapshotSeen;
        this.snapshotSeen = true;
        const fresh = new Map(event.sessions.map((s) => [s.name, s]));
        const removed = [...this.byName.keys()].filter((name) => !fresh.has(name));
        const changed = event.sessions
          .filter((s) => !sameSession(this.byName.get(s.name), s))
          .map((s) => ({ session: s, before: this.byName.get(s.name) }));
        this.byName.clear();
        for (const [name, s] of fresh) this.byName.set(name, s);
        this.setUnreachable(event.unreachable);
        this.emit({ changed, removed, initial });
        return;
      }
      case WatchEventType.UPSERTED:
      case WatchEventType.UNREACHABLE_CHANGED: {
        const changed = event.sessions.map((s) => ({ session: s, before: this.byName.get(s.name) }));
        for (const s of event.sessions) this.byName.set(s.name, s);
        if (event.type === WatchEventType.UNREACHABLE_CHANGED) this.setUnreachable(event.unreachable);
        this.emit({ changed, removed: [], initial: false });
        return;
      }
      case WatchEventType.REMOVED: {
        const removed = event.removedNames.filter((name) => this.byName.delete(name));
        this.emit({ changed: [], removed, initial: false });
        return;
      }
      default:
        return;
    }
  }

  /** Forgets everything (after logging out). */
  clear(): void {
    this.byName.clear();
    this.unreachableNodes.clear();
    this.snapshotSeen = false;
    this.version++;
  }

  private setUnreachable(names: readonly string[]): void {
    this.unreachableNodes.clear();
    for (const n of names) this.unreachableNodes.add(n);
  }

  private emit(change: StoreChange): void {
    this.version++;
    for (const listener of this.listeners) listener(change);
  }
}

/** Whether two states of a session would look the same (cheap fields first). */
function sameSession(a: Session | undefined, b: Session): boolean {
  if (!a) return false;
  return (
    a.status === b.status &&
    a.statusReason === b.statusReason &&
    a.prompt === b.prompt &&
    a.completionId === b.completionId &&
    a.cwd === b.cwd &&
    a.command === b.command &&
    a.cli === b.cli &&
    a.nodeUnreachable === b.nodeUnreachable &&
    a.chatRevision === b.chatRevision &&
    a.lastActivityTime?.seconds === b.lastActivityTime?.seconds &&
    a.attachedClients === b.attachedClients &&
    a.paneTitle === b.paneTitle
  );
}
