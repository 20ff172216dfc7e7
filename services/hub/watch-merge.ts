import { create } from "@bufbuild/protobuf";
import { type Session, SessionSchema } from "../../gen/staragent/v1/session_pb.js";
import {
  WatchEventType,
  type WatchSessionsResponse,
  WatchSessionsResponseSchema,
} from "../../gen/staragent/v1/session_service_pb.js";

/** Last sessions seen per node id, shared with lists: shown (marked unreachable) while a node cannot be reached. */
export type LastKnownSessions = Map<string, Session[]>;

/**
 * The merge of several nodes' WatchSessions streams into the one stream a Hub's caller sees, as a
 * plain state machine: it is told what each node's stream did and answers with the events to send.
 *
 * - One SNAPSHOT, once every node has either sent its first snapshot, failed (its last known
 *   sessions then stand in, marked `node_unreachable`) or been removed from the Hub.
 * - After that, each node's changes pass on; a node's later snapshot (after a reconnect) becomes
 *   UPSERTED and REMOVED against what the merge held for it.
 * - A node becoming unreachable or reachable again is UNREACHABLE_CHANGED with its sessions so marked;
 *   a node removed from the Hub takes its sessions out of the view (REMOVED); a node added to the Hub
 *   while the watch runs brings its sessions in (UPSERTED).
 */
export class WatchMerge {
  private readonly current = new Map<string, Map<string, Session>>();
  private readonly unreachable = new Set<string>();
  /** Nodes whose first answer (a snapshot, a failure or removal) the merged snapshot still waits for. */
  private readonly awaitingFirst: Set<string>;
  private snapshotSent = false;

  constructor(
    nodeIds: readonly string[],
    private readonly lastKnown: LastKnownSessions,
  ) {
    this.awaitingFirst = new Set(nodeIds);
  }

  /** The events to send before any node answers: the snapshot, when there are no nodes at all. */
  start(): WatchSessionsResponse[] {
    return this.snapshotIfReady();
  }

  /** One event of a node's stream; the node answered, so it is reachable. */
  nodeEvent(id: string, event: WatchSessionsResponse): WatchSessionsResponse[] {
    const out = this.apply(id, event);
    out.push(...this.setReachable(id, true));
    if (event.type === WatchEventType.SNAPSHOT && this.awaitingFirst.delete(id)) out.push(...this.snapshotIfReady());
    return out;
  }

  /** A node's stream broke or the node went OFFLINE: it is unreachable until it answers again. */
  nodeUnreachable(id: string): WatchSessionsResponse[] {
    const out = this.setReachable(id, false);
    if (this.awaitingFirst.delete(id)) {
      for (const s of this.lastKnown.get(id) ?? []) {
        this.sessionsOf(id).set(s.name, create(SessionSchema, { ...s, nodeUnreachable: true }));
      }
      out.push(...this.snapshotIfReady());
    }
    return out;
  }

  /**
   * A node was added to the Hub after the watch started: its first snapshot joins the merged one when
   * that is still to come, or arrives as UPSERTED (its unreachability as UNREACHABLE_CHANGED) after it.
   */
  nodeAdded(id: string): WatchSessionsResponse[] {
    if (!this.snapshotSent) this.awaitingFirst.add(id);
    return [];
  }

  /** A node was removed from the Hub: its sessions leave the merged view. */
  nodeRemoved(id: string): WatchSessionsResponse[] {
    const out = this.awaitingFirst.delete(id) ? this.snapshotIfReady() : [];
    const names = [...(this.current.get(id)?.keys() ?? [])];
    this.current.delete(id);
    if (!this.snapshotSent) return out;
    if (names.length > 0) {
      out.push(create(WatchSessionsResponseSchema, { type: WatchEventType.REMOVED, removedNames: names }));
    }
    if (this.unreachable.delete(`nodes/${id}`)) {
      out.push(
        create(WatchSessionsResponseSchema, {
          type: WatchEventType.UNREACHABLE_CHANGED,
          unreachable: [...this.unreachable].sort(),
        }),
      );
    }
    return out;
  }

  private snapshotIfReady(): WatchSessionsResponse[] {
    if (this.snapshotSent || this.awaitingFirst.size > 0) return [];
    this.snapshotSent = true;
    const sessions = [...this.current.values()].flatMap((m) => [...m.values()]);
    sessions.sort((a, b) => `${a.node}/${a.tmuxSession}`.localeCompare(`${b.node}/${b.tmuxSession}`));
    return [
      create(WatchSessionsResponseSchema, {
        type: WatchEventType.SNAPSHOT,
        sessions,
        unreachable: [...this.unreachable].sort(),
      }),
    ];
  }

  private setReachable(id: string, reachable: boolean): WatchSessionsResponse[] {
    const name = `nodes/${id}`;
    if (reachable === !this.unreachable.has(name)) return [];
    if (reachable) this.unreachable.delete(name);
    else this.unreachable.add(name);
    if (!this.snapshotSent) return [];
    const marked = [...(this.current.get(id)?.values() ?? [])].map((s) =>
      create(SessionSchema, { ...s, nodeUnreachable: !reachable }),
    );
    return [
      create(WatchSessionsResponseSchema, {
        type: WatchEventType.UNREACHABLE_CHANGED,
        sessions: marked,
        unreachable: [...this.unreachable].sort(),
      }),
    ];
  }

  /** Folds one node event into the merged view; the events the caller should see. */
  private apply(id: string, event: WatchSessionsResponse): WatchSessionsResponse[] {
    const sessions = this.sessionsOf(id);
    const out: WatchSessionsResponse[] = [];
    switch (event.type) {
      case WatchEventType.SNAPSHOT: {
        const fresh = new Map(event.sessions.map((s) => [s.name, s]));
        const removed = [...sessions.keys()].filter((name) => !fresh.has(name));
        this.current.set(id, fresh);
        this.lastKnown.set(id, event.sessions);
        if (!this.snapshotSent) return out;
        if (event.sessions.length > 0) {
          out.push(create(WatchSessionsResponseSchema, { type: WatchEventType.UPSERTED, sessions: event.sessions }));
        }
        if (removed.length > 0) {
          out.push(create(WatchSessionsResponseSchema, { type: WatchEventType.REMOVED, removedNames: removed }));
        }
        return out;
      }
      case WatchEventType.UPSERTED:
        for (const s of event.sessions) sessions.set(s.name, s);
        this.lastKnown.set(id, [...sessions.values()]);
        break;
      case WatchEventType.REMOVED:
        for (const name of event.removedNames) sessions.delete(name);
        this.lastKnown.set(id, [...sessions.values()]);
        break;
      case WatchEventType.HEARTBEAT:
        break;
      default:
        return out;
    }
    if (this.snapshotSent) out.push(event);
    return out;
  }

  private sessionsOf(id: string): Map<string, Session> {
    let sessions = this.current.get(id);
    if (!sessions) {
      sessions = new Map();
      this.current.set(id, sessions);
    }
    return sessions;
  }
}
