import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { CountingTarget, FakeHost } from "../testing/fake-host.js";
import { IntervalController } from "./interval.js";
import { ListenersController } from "./listeners.js";
import { MediaQueryController } from "./media-query.js";
import { PageLifecycleController } from "./page-lifecycle.js";
import { ResizeController } from "./resize.js";
import { RovingFocusController, rovingStep } from "./roving-focus.js";
import { VisualViewportController } from "./visual-viewport.js";

/** A media query list whose answer the test changes. */
class FakeMediaQueryList extends CountingTarget {
  constructor(public matches: boolean) {
    super();
  }
  set(matches: boolean): void {
    this.matches = matches;
    this.dispatchEvent(new Event("change"));
  }
}

describe("MediaQueryController", () => {
  it("follows the query while connected, re-rendering and telling the host of each change", () => {
    const host = new FakeHost();
    const list = new FakeMediaQueryList(false);
    const seen: boolean[] = [];
    const c = new MediaQueryController(host, "(pointer: coarse)", (m) => seen.push(m), {
      matchMedia: () => list as unknown as MediaQueryList,
    });
    expect(c.matches).toBe(false);
    host.connect();
    list.set(true);
    expect(c.matches).toBe(true);
    expect(seen).toEqual([true]);
    expect(host.updates).toBe(1);
    host.disconnect();
    expect(list.listeners).toBe(0);
    list.set(false);
    expect(seen).toEqual([true]);
  });
});

describe("PageLifecycleController", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function setUp() {
    const host = new FakeHost();
    const win = new CountingTarget();
    const doc = Object.assign(new CountingTarget(), { visibilityState: "visible" as DocumentVisibilityState });
    const calls: string[] = [];
    new PageLifecycleController(
      host,
      {
        hiddenReleaseMs: 60_000,
        onHiddenLong: () => calls.push("hidden-long"),
        onVisible: () => calls.push("visible"),
        onPageHide: () => calls.push("pagehide"),
        onPageRestore: () => calls.push("restore"),
      },
      { window: win, document: doc },
    );
    const visibility = (state: DocumentVisibilityState) => {
      doc.visibilityState = state;
      doc.dispatchEvent(new Event("visibilitychange"));
    };
    return { host, win, doc, calls, visibility };
  }

  it("releases after the page has been hidden for the whole delay, not before", () => {
    const { host, calls, visibility } = setUp();
    host.connect();
    visibility("hidden");
    vi.advanceTimersByTime(59_999);
    expect(calls).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(calls).toEqual(["hidden-long"]);
  });

  it("cancels the release when the page is visible again in time", () => {
    const { host, calls, visibility } = setUp();
    host.connect();
    visibility("hidden");
    vi.advanceTimersByTime(30_000);
    visibility("visible");
    vi.advanceTimersByTime(60_000);
    expect(calls).toEqual(["visible"]);
  });

  it("closes on pagehide, reopens only for a page restored from the back/forward cache", () => {
    const { host, win, calls } = setUp();
    host.connect();
    win.dispatchEvent(new Event("pagehide"));
    win.dispatchEvent(Object.assign(new Event("pageshow"), { persisted: false }));
    win.dispatchEvent(Object.assign(new Event("pageshow"), { persisted: true }));
    expect(calls).toEqual(["pagehide", "restore"]);
  });

  it("removes its listeners and its timer on disconnect", () => {
    const { host, win, doc, calls, visibility } = setUp();
    host.connect();
    expect(win.listeners + doc.listeners).toBe(3);
    visibility("hidden");
    host.disconnect();
    expect(win.listeners + doc.listeners).toBe(0);
    vi.advanceTimersByTime(120_000);
    expect(calls).toEqual([]);
  });
});

describe("ResizeController", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function setUp(settleMs: number) {
    const host = new FakeHost();
    let fire: () => void = () => {};
    let observed = 0;
    let disconnected = 0;
    let resized = 0;
    const c = new ResizeController(host, {
      settleMs,
      onResize: () => resized++,
      createObserver: (cb) => {
        fire = cb;
        return {
          observe: () => {
            observed++;
          },
          disconnect: () => {
            disconnected++;
          },
        };
      },
      requestFrame: (cb) => cb(),
    });
    return { host, c, fire: () => fire(), counts: () => ({ observed, disconnected, resized }) };
  }

  it("folds a drag's many size changes into one call after the settle time", () => {
    const { host, c, fire, counts } = setUp(80);
    host.connect();
    c.observe({} as Element);
    for (let i = 0; i < 10; i++) {
      fire();
      vi.advanceTimersByTime(5);
    }
    expect(counts().resized).toBe(0);
    vi.advanceTimersByTime(80);
    expect(counts().resized).toBe(1);
  });

  it("calls at once with no settle time, and stops observing on disconnect and again on reconnect", () => {
    const { host, c, fire, counts } = setUp(0);
    host.connect();
    c.observe({} as Element);
    fire();
    fire();
    expect(counts().resized).toBe(2);
    host.disconnect();
    expect(counts().disconnected).toBe(1);
    host.connect();
    expect(counts().observed).toBe(2);
  });
});

describe("rovingStep and RovingFocusController", () => {
  it("moves by one, by a page, to the ends, and stays inside the list", () => {
    expect(rovingStep("ArrowDown", 0, 5, 3)).toBe(1);
    expect(rovingStep("j", 4, 5, 3)).toBe(4);
    expect(rovingStep("ArrowUp", 0, 5, 3)).toBe(0);
    expect(rovingStep("k", 3, 5, 3)).toBe(2);
    expect(rovingStep("PageDown", 1, 5, 3)).toBe(4);
    expect(rovingStep("PageUp", 4, 5, 3)).toBe(1);
    expect(rovingStep("Home", 3, 5, 3)).toBe(0);
    expect(rovingStep("End", 0, 5, 3)).toBe(4);
    expect(rovingStep("x", 0, 5, 3)).toBeUndefined();
  });

  it("focuses the item only after the host rendered it, once", () => {
    const host = new FakeHost();
    const focused: string[] = [];
    const c = new RovingFocusController(host, (key) => ({ focus: () => focused.push(key) }) as unknown as HTMLElement);
    c.activeKey = "a";
    host.update();
    expect(focused).toEqual([]);
    c.focus("b");
    expect(c.activeKey).toBe("b");
    expect(focused).toEqual([]);
    host.update();
    host.update();
    expect(focused).toEqual(["b"]);
  });
});

describe("VisualViewportController", () => {
  it("publishes the visual viewport's height and top, once per frame, while connected", () => {
    const host = new FakeHost();
    const vv = Object.assign(new CountingTarget(), { height: 500.4, offsetTop: 10.6 });
    const props = new Map<string, string>();
    const frames: Array<() => void> = [];
    new VisualViewportController(host, {
      viewport: vv,
      root: { style: { setProperty: (k: string, v: string | null) => void props.set(k, v ?? "") } },
      requestFrame: (cb) => frames.push(cb),
    });
    host.connect();
    expect(props.get("--vv-height")).toBe("500px");
    expect(props.get("--vv-top")).toBe("11px");
    vv.height = 300;
    vv.dispatchEvent(new Event("resize"));
    vv.dispatchEvent(new Event("scroll"));
    expect(frames).toHaveLength(1);
    frames[0]?.();
    expect(props.get("--vv-height")).toBe("300px");
    host.disconnect();
    expect(vv.listeners).toBe(0);
  });
});

describe("ListenersController", () => {
  it("adds its listeners on connect and removes every one on disconnect", () => {
    const host = new FakeHost();
    const target = new CountingTarget();
    let heard = 0;
    const c = new ListenersController(host, () => [[target, "ping", () => heard++]]);
    host.connect();
    c.add([target, "pong", () => heard++, { capture: true }]);
    target.dispatchEvent(new Event("ping"));
    target.dispatchEvent(new Event("pong"));
    expect(heard).toBe(2);
    host.disconnect();
    expect(target.listeners).toBe(0);
    target.dispatchEvent(new Event("ping"));
    expect(heard).toBe(2);
  });
});

describe("IntervalController", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("re-renders on each tick while its condition holds, and not after disconnect", () => {
    const host = new FakeHost();
    let waiting = false;
    new IntervalController(host, 1_000, () => waiting);
    host.connect();
    vi.advanceTimersByTime(3_000);
    expect(host.updates).toBe(0);
    waiting = true;
    vi.advanceTimersByTime(2_000);
    expect(host.updates).toBe(2);
    host.disconnect();
    vi.advanceTimersByTime(5_000);
    expect(host.updates).toBe(2);
  });
});
