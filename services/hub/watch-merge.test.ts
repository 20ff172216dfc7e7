import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { type Session, SessionSchema } from "../../gen/staragent/v1/session_pb.js";
import {
  WatchEventType,
  type WatchSessionsResponse,
  WatchSessionsResponseSchema,
} from "../../gen/staragent/v1/session_service_pb.js";
import { type LastKnownSessions, WatchMerge } from "./watch-merge.js";

const session = (node: string, tmux: string, paneTitle = ""): Session =>
  create(SessionSchema, { name: `nodes/${node}/sessions/${tmux}`, node, tmuxSession: tmux, paneTitle });
const event = (
  type: WatchEventType,
  fields: { sessions?: Session[]; removedNames?: string[] } = {},
): WatchSessionsResponse => create(WatchSessionsResponseSchema, { type, ...fields });
const snapshot = (...sessions: Session[]) => event(WatchEventType.SNAPSHOT, { sessions });

/** An event as plain values: its type, its sessions' names (and whether each is marked unreachable), the rest. */
function plain(e: WatchSessionsResponse) {
  return {
    type: WatchEventType[e.type],
    sessions: e.sessions.map((s) => `${s.name}${s.nodeUnreachable ? " (unreachable)" : ""}`),
    removed: e.removedNames,
    unreachable: e.unreachable,
  };
}
const plainAll = (events: WatchSessionsResponse[]) => events.map(plain);

describe("WatchMerge", () => {
  it("sends one snapshot of every node, sorted by node and session, once the last node has answered", () => {
    const merge = new WatchMerge(["b", "a"], new Map());
    expect(merge.start()).toEqual([]);
    expect(merge.nodeEvent("b", snapshot(session("b", "x")))).toEqual([]);
    expect(plainAll(merge.nodeEvent("a", snapshot(session("a", "z"), session("a", "y"))))).toEqual([
      {
        type: "SNAPSHOT",
        sessions: ["nodes/a/sessions/y", "nodes/a/sessions/z", "nodes/b/sessions/x"],
        removed: [],
        unreachable: [],
      },
    ]);
  });

  it("sends an empty snapshot at once when there are no nodes", () => {
    expect(plainAll(new WatchMerge([], new Map()).start())).toEqual([
      { type: "SNAPSHOT", sessions: [], removed: [], unreachable: [] },
    ]);
  });

  it("stands in a failed node's last known sessions, marked unreachable, and reports it back when it answers", () => {
    const lastKnown: LastKnownSessions = new Map([["b", [session("b", "old")]]]);
    const merge = new WatchMerge(["a", "b"], lastKnown);
    expect(merge.nodeEvent("a", snapshot(session("a", "x")))).toEqual([]);
    expect(plainAll(merge.nodeUnreachable("b"))).toEqual([
      {
        type: "SNAPSHOT",
        sessions: ["nodes/a/sessions/x", "nodes/b/sessions/old (unreachable)"],
        removed: [],
        unreachable: ["nodes/b"],
      },
    ]);
    // Back with a fresh snapshot: its sessions as changes, then the node reachable again.
    expect(plainAll(merge.nodeEvent("b", snapshot(session("b", "new"))))).toEqual([
      { type: "UPSERTED", sessions: ["nodes/b/sessions/new"], removed: [], unreachable: [] },
      { type: "REMOVED", sessions: [], removed: ["nodes/b/sessions/old"], unreachable: [] },
      { type: "UNREACHABLE_CHANGED", sessions: ["nodes/b/sessions/new"], removed: [], unreachable: [] },
    ]);
    expect(lastKnown.get("b")?.map((s) => s.tmuxSession)).toEqual(["new"]);
  });

  it("passes changes on after the snapshot and keeps the last known sessions of each node", () => {
    const lastKnown: LastKnownSessions = new Map();
    const merge = new WatchMerge(["a"], lastKnown);
    merge.nodeEvent("a", snapshot(session("a", "x"), session("a", "y")));
    const upsert = event(WatchEventType.UPSERTED, { sessions: [session("a", "x", "titled")] });
    const remove = event(WatchEventType.REMOVED, { removedNames: ["nodes/a/sessions/y"] });
    const beat = event(WatchEventType.HEARTBEAT);
    expect(merge.nodeEvent("a", upsert)).toEqual([upsert]);
    expect(merge.nodeEvent("a", remove)).toEqual([remove]);
    expect(merge.nodeEvent("a", beat)).toEqual([beat]);
    expect(lastKnown.get("a")?.map((s) => [s.tmuxSession, s.paneTitle])).toEqual([["x", "titled"]]);
  });

  it("marks a node's sessions unreachable once after the snapshot, and not again while it stays so", () => {
    const merge = new WatchMerge(["a"], new Map());
    merge.nodeEvent("a", snapshot(session("a", "x")));
    expect(plainAll(merge.nodeUnreachable("a"))).toEqual([
      {
        type: "UNREACHABLE_CHANGED",
        sessions: ["nodes/a/sessions/x (unreachable)"],
        removed: [],
        unreachable: ["nodes/a"],
      },
    ]);
    expect(merge.nodeUnreachable("a")).toEqual([]);
  });

  it("takes a removed node's sessions out of the view, and out of unreachable", () => {
    const merge = new WatchMerge(["a", "b"], new Map([["b", [session("b", "old")]]]));
    merge.nodeEvent("a", snapshot(session("a", "x")));
    merge.nodeUnreachable("b");
    expect(plainAll(merge.nodeRemoved("b"))).toEqual([
      { type: "REMOVED", sessions: [], removed: ["nodes/b/sessions/old"], unreachable: [] },
      { type: "UNREACHABLE_CHANGED", sessions: [], removed: [], unreachable: [] },
    ]);
  });

  it("does not wait for a node removed before its first answer", () => {
    const merge = new WatchMerge(["a", "b"], new Map());
    expect(merge.nodeEvent("a", snapshot(session("a", "x")))).toEqual([]);
    expect(plainAll(merge.nodeRemoved("b"))).toEqual([
      { type: "SNAPSHOT", sessions: ["nodes/a/sessions/x"], removed: [], unreachable: [] },
    ]);
  });

  it("takes in a node added after the watch started: in the snapshot while it is still to come, as UPSERTED after", () => {
    const merge = new WatchMerge(["a"], new Map());
    expect(merge.nodeAdded("b")).toEqual([]);
    expect(merge.nodeEvent("a", snapshot(session("a", "x")))).toEqual([]);
    expect(plainAll(merge.nodeEvent("b", snapshot(session("b", "y"))))).toEqual([
      { type: "SNAPSHOT", sessions: ["nodes/a/sessions/x", "nodes/b/sessions/y"], removed: [], unreachable: [] },
    ]);
    expect(merge.nodeAdded("c")).toEqual([]);
    expect(plainAll(merge.nodeEvent("c", snapshot(session("c", "z"))))).toEqual([
      { type: "UPSERTED", sessions: ["nodes/c/sessions/z"], removed: [], unreachable: [] },
    ]);
    expect(plainAll(merge.nodeRemoved("c"))).toEqual([
      { type: "REMOVED", sessions: [], removed: ["nodes/c/sessions/z"], unreachable: [] },
    ]);
  });
});
