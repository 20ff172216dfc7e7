import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { afterEach, describe, expect, it, vi } from "vitest";
import { NodeSchema, NodeService } from "../../../gen/staragent/v1/node_service_pb.js";
import { SessionSchema } from "../../../gen/staragent/v1/session_pb.js";
import {
  SessionService,
  WatchEventType,
  type WatchSessionsResponse,
  WatchSessionsResponseSchema,
} from "../../../gen/staragent/v1/session_service_pb.js";
import { HubStreams } from "./hub-streams.js";
import { DEFAULT_LIST_VIEW } from "./list-view.js";
import { NodeStore } from "./node-store.js";
import { PREFERENCES_KEY, PreferencesStore, parsePreferences } from "./preferences.js";
import { Router, type RouterEnv } from "./router.js";
import { ROW_HEIGHTS, RowWindow } from "./row-window.js";
import type { ListRow } from "./session-filter.js";
import { SessionStore } from "./session-store.js";

describe("PreferencesStore", () => {
  function memory(initial?: string) {
    const map = new Map<string, string>(initial === undefined ? [] : [[PREFERENCES_KEY, initial]]);
    return {
      map,
      storage: { getItem: (k: string) => map.get(k) ?? null, setItem: (k: string, v: string) => void map.set(k, v) },
    };
  }

  it("reads defaults for anything missing, unreadable or of the wrong kind", () => {
    expect(parsePreferences(null)).toEqual({
      theme: "system",
      notify: false,
      screenReader: false,
      list: DEFAULT_LIST_VIEW,
    });
    expect(parsePreferences("{not json")).toEqual({
      theme: "system",
      notify: false,
      screenReader: false,
      list: DEFAULT_LIST_VIEW,
    });
    expect(parsePreferences('{"theme":"neon","notify":"yes","screenReader":true}')).toEqual({
      theme: "system",
      notify: false,
      screenReader: true,
      list: DEFAULT_LIST_VIEW,
    });
    expect(parsePreferences("[1]")).toEqual({
      theme: "system",
      notify: false,
      screenReader: false,
      list: DEFAULT_LIST_VIEW,
    });
    expect(parsePreferences("null")).toEqual({
      theme: "system",
      notify: false,
      screenReader: false,
      list: DEFAULT_LIST_VIEW,
    });
    // A missing field takes its default alone; a field the page no longer knows is dropped.
    expect(parsePreferences('{"theme":"light","old":1}')).toEqual({
      theme: "light",
      notify: false,
      screenReader: false,
      list: DEFAULT_LIST_VIEW,
    });
    expect(parsePreferences('{"notify":true,"theme":7}')).toEqual({
      theme: "system",
      notify: true,
      screenReader: false,
      list: DEFAULT_LIST_VIEW,
    });
  });

  it("saves each change, tells subscribers, and shows the system's theme for 'system'", () => {
    const { map, storage } = memory('{"theme":"dark"}');
    let dark = false;
    const store = new PreferencesStore(storage, () => dark);
    expect(store.theme).toBe("dark");
    let heard = 0;
    store.subscribe(() => heard++);
    store.update({ theme: "system", screenReader: true });
    expect(store.theme).toBe("light");
    expect(JSON.parse(map.get(PREFERENCES_KEY) ?? "")).toEqual({
      theme: "system",
      notify: false,
      screenReader: true,
      list: DEFAULT_LIST_VIEW,
    });
    expect(heard).toBe(1);
    dark = true;
    store.systemThemeChanged();
    expect(store.theme).toBe("dark");
    expect(heard).toBe(2);
    // Nothing shown changed: nobody is told.
    store.systemThemeChanged();
    store.update({ theme: "dark" });
    expect(heard).toBe(3);
    store.systemThemeChanged();
    expect(heard).toBe(3);
  });

  it("keeps working when storage refuses (a full or private-mode storage only loses the choice)", () => {
    const store = new PreferencesStore(
      {
        getItem: () => {
          throw new Error("denied");
        },
        setItem: () => {
          throw new Error("quota");
        },
      },
      () => false,
    );
    expect(store.value.notify).toBe(false);
    store.update({ notify: true });
    expect(store.value.notify).toBe(true);
  });
});

describe("Router", () => {
  function env(path: string): RouterEnv & { entries: string[] } {
    const url = new URL(path, "http://hub.test");
    const entries: string[] = [];
    const loc = { pathname: url.pathname, search: url.search, origin: url.origin };
    const go = (target: string) => {
      const next = new URL(target, loc.origin);
      loc.pathname = next.pathname;
      loc.search = next.search;
    };
    return {
      entries,
      location: loc,
      history: {
        pushState: (_d: unknown, _t: string, u?: string | URL | null) => {
          entries.push(`push ${u}`);
          go(String(u));
        },
        replaceState: (_d: unknown, _t: string, u?: string | URL | null) => {
          entries.push(`replace ${u}`);
          go(String(u));
        },
      },
    };
  }

  it("keeps the list's filter when going to a session, and follows only same-origin paths", () => {
    const e = env("/?status=review");
    const router = new Router(e);
    let heard = 0;
    router.subscribe(() => heard++);
    router.navigate("/sessions/local/a");
    expect(e.entries).toEqual(["push /sessions/local/a?status=review"]);
    expect(router.route).toEqual({ page: "sessions", session: { node: "local", id: "a" }, tab: "terminal" });
    expect(router.viewedSession).toBe("nodes/local/sessions/a");
    expect(router.filter.status).toBe("review");
    router.navigate("https://elsewhere.test/x");
    expect(e.entries).toHaveLength(1);
    expect(heard).toBe(1);
  });

  it("writes a filter change into the address without a new history entry; back/forward re-reads it", () => {
    const e = env("/nodes");
    const router = new Router(e);
    router.setFilter({ ...router.filter, cli: "codex" });
    expect(e.entries).toEqual(["replace /nodes?cli=codex"]);
    e.location.pathname = "/";
    e.location.search = "?status=idle";
    router.sync();
    expect(router.filter).toMatchObject({ status: "idle", cli: "all" });
    router.navigate("/login", { replace: true });
    expect(e.entries.at(-1)).toBe("replace /login");
    expect(router.route.page).toBe("login");
  });

  it("records where the focus was at each change of route, not at a change of filter", () => {
    let focused = "body";
    const router = new Router({ ...env("/"), focused: () => focused });
    expect(router.focusAtChange).toBe("body");
    focused = "row a";
    router.navigate("/sessions/local/a");
    focused = "menu";
    router.setFilter({ ...router.filter, cli: "codex" });
    expect(router.focusAtChange).toBe("row a");
    router.sync();
    expect(router.focusAtChange).toBe("menu");
  });
});

describe("RowWindow", () => {
  const node = (n: string): ListRow => ({
    kind: "node",
    key: `node:${n}`,
    node: n,
    label: n,
    info: undefined,
    reachable: true,
    shown: 1,
  });
  const sess = (id: string): ListRow => ({
    kind: "session",
    key: `nodes/local/sessions/${id}`,
    session: create(SessionSchema, { name: `nodes/local/sessions/${id}` }),
  });
  const rows = [node("local"), ...Array.from({ length: 100 }, (_, i) => sess(`s${i}`))];

  it("lays rows out from the fixed heights and numbers the session rows only", () => {
    const w = new RowWindow(rows);
    expect(w.top(1)).toBe(ROW_HEIGHTS.node);
    expect(w.top(2)).toBe(ROW_HEIGHTS.node + ROW_HEIGHTS.session);
    expect(w.totalHeight).toBe(ROW_HEIGHTS.node + 100 * ROW_HEIGHTS.session);
    expect([w.position(0), w.position(1), w.position(100)]).toEqual([0, 1, 100]);
    expect(w.sessionCount).toBe(100);
    expect(w.firstSessionKey).toBe("nodes/local/sessions/s0");
  });

  it("renders only the rows in view plus the overscan, wherever the list is scrolled", () => {
    const w = new RowWindow(rows);
    const [first, last] = w.visibleRange(0, 720);
    expect(first).toBe(0);
    // 720 px of view and 360 px of overscan below: 1080 px of rows, not all 101.
    expect(last).toBe(1 + Math.ceil((1080 - ROW_HEIGHTS.node) / ROW_HEIGHTS.session));
    const [f2, l2] = w.visibleRange(3_600, 720);
    expect(w.top(f2)).toBeLessThanOrEqual(3_600 - 360);
    expect(w.top(f2 + 1)).toBeGreaterThan(3_600 - 360);
    expect(w.top(l2 - 1)).toBeLessThan(3_600 + 720 + 360);
  });

  it("scrolls a row into view: the keyboard only as far as needed, a selection with its header room", () => {
    const w = new RowWindow(rows);
    const i = 50;
    expect(w.revealScroll(i, 0, 720, true)).toBe(w.top(i) + ROW_HEIGHTS.session - 720);
    expect(w.revealScroll(i, 10_000, 720, true)).toBe(w.top(i));
    expect(w.revealScroll(i, 10_000, 720, false)).toBe(w.top(i) - ROW_HEIGHTS.node);
    expect(w.revealScroll(i, w.top(i), 720, false)).toBe(w.top(i));
  });

  it("moves the focus to the row that took a removed row's place, or the last one", () => {
    const before = new RowWindow([node("local"), sess("a"), sess("b"), sess("c")]);
    expect(before.replacementFor(sess("b").key, new RowWindow([node("local"), sess("a"), sess("c")]))).toBe(
      sess("c").key,
    );
    expect(before.replacementFor(sess("c").key, new RowWindow([node("local"), sess("a"), sess("b")]))).toBe(
      sess("b").key,
    );
    expect(before.replacementFor(sess("a").key, before)).toBeUndefined();
    expect(before.replacementFor(sess("a").key, new RowWindow([node("local")]))).toBeUndefined();
  });
});

describe("HubStreams", () => {
  const running: HubStreams[] = [];
  afterEach(() => {
    for (const s of running.splice(0)) s.stop();
  });

  function hub(watch: () => AsyncIterable<WatchSessionsResponse>) {
    let nodeWatches = 0;
    const transport = createRouterTransport((router) => {
      router.service(SessionService, { watchSessions: () => watch() });
      router.service(NodeService, {
        async *watchNodes() {
          nodeWatches++;
          yield { nodes: [create(NodeSchema, { name: "nodes/local" })] };
          await new Promise(() => {});
        },
      });
    });
    const hubClient = {
      sessions: createClient(SessionService, transport),
      nodes: createClient(NodeService, transport),
    };
    return { hubClient, nodeWatches: () => nodeWatches };
  }

  it("feeds the stores, is logged in once the stream is live, and opens the nodes stream when visible", async () => {
    const { hubClient, nodeWatches } = hub(async function* () {
      yield create(WatchSessionsResponseSchema, {
        type: WatchEventType.SNAPSHOT,
        sessions: [create(SessionSchema, { name: "nodes/local/sessions/a", node: "local", tmuxSession: "a" })],
      });
      await new Promise(() => {});
    });
    const sessions = new SessionStore();
    const nodes = new NodeStore();
    const applied: number[] = [];
    const streams = new HubStreams({
      hub: hubClient,
      sessions,
      nodes,
      isVisible: () => true,
      onSessionsApplied: (e) => applied.push(e.sessions.length),
      onLoggedOut: () => {},
    });
    running.push(streams);
    expect(streams.auth).toBe("checking");
    streams.start();
    await vi.waitFor(() => expect(sessions.loaded && nodes.loaded).toBe(true));
    expect(streams.auth).toBe("in");
    expect(streams.state.kind).toBe("live");
    expect(applied).toEqual([1]);
    expect(nodeWatches()).toBe(1);
    streams.hiddenLong();
    expect(streams.nodesRunning).toBe(false);
    streams.visible();
    expect(streams.nodesRunning).toBe(true);
  });

  it("a refused login stops both streams, empties the stores and says logged out", async () => {
    const { hubClient } = hub(() => {
      throw new ConnectError("log in first", Code.Unauthenticated);
    });
    const sessions = new SessionStore();
    sessions.apply(create(WatchSessionsResponseSchema, { type: WatchEventType.SNAPSHOT, sessions: [] }));
    let loggedOut = 0;
    const streams = new HubStreams({
      hub: hubClient,
      sessions,
      nodes: new NodeStore(),
      isVisible: () => false,
      onLoggedOut: () => loggedOut++,
    });
    running.push(streams);
    streams.start();
    await vi.waitFor(() => expect(loggedOut).toBe(1));
    expect(streams.auth).toBe("out");
    expect(sessions.loaded).toBe(false);
    // Asleep and back: nothing is reopened while logged out.
    streams.wake();
    expect(streams.state.kind).toBe("stopped");
  });
});
