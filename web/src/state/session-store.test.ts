import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { type Session, SessionSchema, SessionStatus } from "../../../gen/staragent/v1/session_pb.js";
import { WatchEventType, WatchSessionsResponseSchema } from "../../../gen/staragent/v1/session_service_pb.js";
import { SessionStore, type StoreChange } from "./session-store.js";

function session(id: string, status: SessionStatus, extra: MessageInitShape<typeof SessionSchema> = {}): Session {
  return create(SessionSchema, {
    name: `nodes/local/sessions/${id}`,
    node: "local",
    tmuxSession: id,
    status,
    ...extra,
  });
}

function event(
  type: WatchEventType,
  sessions: Session[] = [],
  removedNames: string[] = [],
  unreachable: string[] = [],
) {
  return create(WatchSessionsResponseSchema, { type, sessions, removedNames, unreachable });
}

describe("SessionStore", () => {
  it("holds what the stream says: a snapshot replaces, upserts change, removals drop, heartbeats do nothing", () => {
    const store = new SessionStore();
    const changes: StoreChange[] = [];
    store.subscribe((c) => changes.push(c));
    expect(store.loaded).toBe(false);
    store.apply(event(WatchEventType.SNAPSHOT, [session("a", SessionStatus.IDLE), session("b", SessionStatus.REVIEW)]));
    expect(store.loaded).toBe(true);
    expect(store.reviewCount()).toBe(1);
    expect(changes[0]?.initial).toBe(true);

    store.apply(event(WatchEventType.UPSERTED, [session("a", SessionStatus.REVIEW)]));
    expect(store.reviewCount()).toBe(2);
    expect(changes[1]?.changed.map((c) => [c.session.status, c.before?.status])).toEqual([
      [SessionStatus.REVIEW, SessionStatus.IDLE],
    ]);

    const version = store.version;
    store.apply(event(WatchEventType.HEARTBEAT));
    expect(store.version).toBe(version);

    store.apply(event(WatchEventType.REMOVED, [], ["nodes/local/sessions/b", "nodes/local/sessions/ghost"]));
    expect([...store.all()].map((s) => s.tmuxSession)).toEqual(["a"]);
    expect(changes[2]?.removed).toEqual(["nodes/local/sessions/b"]);
  });

  it("treats a later snapshot (after a reconnect) as news: what changed meanwhile and what is gone", () => {
    const store = new SessionStore();
    store.apply(
      event(WatchEventType.SNAPSHOT, [session("a", SessionStatus.WORKING), session("b", SessionStatus.IDLE)]),
    );
    const changes: StoreChange[] = [];
    store.subscribe((c) => changes.push(c));
    store.apply(event(WatchEventType.SNAPSHOT, [session("a", SessionStatus.REVIEW), session("b", SessionStatus.IDLE)]));
    expect(changes).toHaveLength(1);
    expect(changes[0]?.initial).toBe(false);
    expect(changes[0]?.changed.map((c) => c.session.tmuxSession)).toEqual(["a"]);
    store.apply(event(WatchEventType.SNAPSHOT, [session("a", SessionStatus.REVIEW)]));
    expect(changes[1]?.removed).toEqual(["nodes/local/sessions/b"]);
  });

  it("tracks unreachable nodes from snapshots and UNREACHABLE_CHANGED, with the sessions marked by the Hub", () => {
    const store = new SessionStore();
    store.apply(event(WatchEventType.SNAPSHOT, [session("a", SessionStatus.IDLE)], [], ["nodes/w1"]));
    expect([...store.unreachable]).toEqual(["nodes/w1"]);
    store.apply(
      event(WatchEventType.UNREACHABLE_CHANGED, [session("a", SessionStatus.IDLE, { nodeUnreachable: true })], [], []),
    );
    expect([...store.unreachable]).toEqual([]);
    expect(store.get("nodes/local/sessions/a")?.nodeUnreachable).toBe(true);
  });
});
