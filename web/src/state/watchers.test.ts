import { create } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it, vi } from "vitest";
import { NodeSchema } from "../../../gen/staragent/v1/node_service_pb.js";
import { CountingTarget, FakeHost } from "../testing/fake-host.js";
import { NodeStore } from "./node-store.js";
import { StoreController } from "./store-controller.js";
import { WAKE_GAP_MS, type WakeReason, WakeWatcher } from "./wake-watcher.js";

describe("NodeStore and StoreController", () => {
  it("keeps the whole list of each event, and re-renders a connected host on each change only", () => {
    const store = new NodeStore();
    const host = new FakeHost();
    new StoreController(host, () => [store]);
    store.set([create(NodeSchema, { name: "nodes/w1" })]);
    expect(host.updates).toBe(0);
    host.connect();
    store.set([create(NodeSchema, { name: "nodes/w1" }), create(NodeSchema, { name: "nodes/w2" })]);
    expect([store.loaded, store.nodes.map((n) => n.name), host.updates]).toEqual([true, ["nodes/w1", "nodes/w2"], 1]);
    host.disconnect();
    store.set([]);
    expect(host.updates).toBe(1);
    store.clear();
    expect([store.loaded, store.nodes]).toEqual([false, []]);
  });
});

/** A document whose visibility the test sets. */
class FakeDocument extends CountingTarget {
  visibilityState: DocumentVisibilityState = "visible";
  show(state: DocumentVisibilityState): void {
    this.visibilityState = state;
    this.dispatchEvent(new Event("visibilitychange"));
  }
}

describe("WakeWatcher", () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });

  function setUp() {
    vi.useFakeTimers();
    const win = new CountingTarget();
    const doc = new FakeDocument();
    vi.stubGlobal("window", win);
    vi.stubGlobal("document", doc);
    const woke: WakeReason[] = [];
    const watcher = new WakeWatcher((reason) => woke.push(reason));
    watcher.start();
    return { win, doc, woke, watcher };
  }

  it("notices a gap in the wall clock (the machine slept), and not ordinary ticks", () => {
    const { woke, watcher } = setUp();
    vi.advanceTimersByTime(10_000);
    expect(woke).toEqual([]);
    // Timers stop while the machine sleeps; the wall clock goes on.
    vi.setSystemTime(Date.now() + WAKE_GAP_MS + 5_000);
    vi.advanceTimersByTime(1_000);
    expect(woke).toEqual(["clock-gap"]);
    watcher.stop();
  });

  it("notices a page restored, resumed, back online or visible after a long hide, and lets go on stop", () => {
    const { win, doc, woke, watcher } = setUp();
    win.dispatchEvent(Object.assign(new Event("pageshow"), { persisted: false }));
    win.dispatchEvent(Object.assign(new Event("pageshow"), { persisted: true }));
    doc.dispatchEvent(new Event("resume"));
    win.dispatchEvent(new Event("online"));
    doc.show("hidden");
    vi.advanceTimersByTime(1_000);
    doc.show("visible");
    doc.show("hidden");
    vi.advanceTimersByTime(WAKE_GAP_MS + 1_000);
    doc.show("visible");
    expect(woke).toEqual(["page-restored", "resumed", "online", "visible-again"]);
    watcher.stop();
    expect([win.listeners, doc.listeners, vi.getTimerCount()]).toEqual([0, 0, 0]);
  });
});
