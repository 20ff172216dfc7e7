import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { Connectivity, NodeSchema } from "../../../gen/staragent/v1/node_service_pb.js";
import {
  Cli,
  type Session,
  SessionOrigin,
  SessionSchema,
  SessionStatus,
  SessionType,
} from "../../../gen/staragent/v1/session_pb.js";
import { DEFAULT_LIST_VIEW, type ListView, parseListView } from "./list-view.js";
import { parsePreferences } from "./preferences.js";
import { COMPACT_SESSION_ROW, ROW_HEIGHTS, RowWindow } from "./row-window.js";
import { buildRows, NO_FILTER } from "./session-filter.js";

function s(id: string, extra: MessageInitShape<typeof SessionSchema> = {}): Session {
  return create(SessionSchema, {
    name: `nodes/local/sessions/${id}`,
    node: "local",
    tmuxSession: id,
    type: SessionType.AGENT,
    origin: SessionOrigin.CREATED,
    status: SessionStatus.IDLE,
    cli: Cli.CLAUDE,
    cwd: `/src/${id}`,
    ...extra,
  });
}

const nodes = [create(NodeSchema, { name: "nodes/local", connectivity: Connectivity.ONLINE, local: true })];
const at = (ms: number) => timestampFromMs(ms);
const sessions = [
  s("a-idle-old", { lastActivityTime: at(1_000) }),
  s("b-working", { status: SessionStatus.WORKING, lastActivityTime: at(2_000), cwd: "/src/api" }),
  s("c-review", { status: SessionStatus.REVIEW, lastActivityTime: at(500), cwd: "/src/api" }),
  s("d-idle-new", { lastActivityTime: at(9_000), worktree: { path: "/wt/d", repositoryRoot: "/src/api" } }),
  s("e-shell", { cli: Cli.SHELL, origin: SessionOrigin.UNMANAGED, cwd: "/home/me" }),
  s("f-node", { type: SessionType.SYSTEM, origin: SessionOrigin.SYSTEM, cli: Cli.SHELL }),
];
const keys = (view: ListView) =>
  buildRows(sessions, nodes, new Set(), NO_FILTER, view).rows.map((r) =>
    r.kind === "session" ? r.session.tmuxSession : r.key,
  );

describe("the list's layout", () => {
  it("orders by name by default, as the list always did", () => {
    expect(keys(DEFAULT_LIST_VIEW)).toEqual([
      "node:local",
      "a-idle-old",
      "b-working",
      "c-review",
      "d-idle-new",
      "e-shell",
      "system:local",
      "f-node",
    ]);
  });

  it("orders names as a person reads them: case aside, numbers by value", () => {
    const named = ["bulk-10", "MyShell", "agent1", "bulk-2", "Agent1", "failing"].map((id) => s(id));
    const rows = buildRows(named, nodes, new Set(), NO_FILTER, DEFAULT_LIST_VIEW).rows;
    expect(rows.flatMap((r) => (r.kind === "session" ? [r.session.tmuxSession] : []))).toEqual([
      "Agent1",
      "agent1",
      "bulk-2",
      "bulk-10",
      "failing",
      "MyShell",
    ]);
  });

  it("orders by attention: review, then working, then the most recent", () => {
    expect(keys({ ...DEFAULT_LIST_VIEW, sort: "attention" })).toEqual([
      "node:local",
      "c-review",
      "b-working",
      "d-idle-new",
      "a-idle-old",
      "e-shell",
      "system:local",
      "f-node",
    ]);
  });

  it("groups by folder (a worktree under its repository), system sessions last, and hides unmanaged shells", () => {
    const view: ListView = { ...DEFAULT_LIST_VIEW, group: "folder", hideShells: true };
    expect(keys(view)).toEqual([
      "folder:/src/a-idle-old",
      "a-idle-old",
      "folder:/src/api",
      "b-working",
      "c-review",
      "d-idle-new",
      "system:all",
      "f-node",
    ]);
    expect(buildRows(sessions, nodes, new Set(), NO_FILTER, view).counts.all).toBe(5);
  });

  it("lays compact rows out at their own height", () => {
    const rows = buildRows(sessions, nodes, new Set(), NO_FILTER, DEFAULT_LIST_VIEW).rows;
    const compact = new RowWindow(rows, "compact");
    expect(compact.height(1)).toBe(COMPACT_SESSION_ROW);
    expect(compact.top(2)).toBe(ROW_HEIGHTS.node + COMPACT_SESSION_ROW);
    expect(new RowWindow(rows).height(1)).toBe(ROW_HEIGHTS.session);
  });

  it("is kept in the preferences, with defaults for anything unreadable", () => {
    const stored = JSON.stringify({
      list: { density: "compact", sort: "attention", group: "folder", hideShells: true },
    });
    expect(parsePreferences(stored).list).toEqual({
      density: "compact",
      sort: "attention",
      group: "folder",
      hideShells: true,
    });
    expect(parsePreferences("{}").list).toEqual(DEFAULT_LIST_VIEW);
    expect(parseListView({ density: "tiny", sort: 3, group: null, hideShells: "yes" })).toEqual(DEFAULT_LIST_VIEW);
  });
});
