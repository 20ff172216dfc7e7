import { afterEach, describe, expect, it, vi } from "vitest";
import { CountingTarget, FakeHost } from "../testing/fake-host.js";
import { FullscreenController } from "./fullscreen.js";

/** A document whose full-screen element the test sets, as the browser would. */
class FakeDocument extends CountingTarget {
  fullscreenElement: unknown = null;
  async exitFullscreen(): Promise<void> {
    this.change(null);
  }
  change(element: unknown): void {
    this.fullscreenElement = element;
    this.dispatchEvent(new Event("fullscreenchange"));
  }
}

/** A host element that can ask for full screen (refused when `refuse` is set). */
class FullscreenHost extends FakeHost {
  refuse: string | undefined;
  constructor(private readonly doc: FakeDocument) {
    super();
  }
  async requestFullscreen(): Promise<void> {
    if (this.refuse) throw new TypeError(this.refuse);
    this.doc.change(this);
  }
}

function setUp() {
  const doc = new FakeDocument();
  const keyboard = {
    locks: 0,
    unlocks: 0,
    lock: async () => void keyboard.locks++,
    unlock: () => void keyboard.unlocks++,
  };
  vi.stubGlobal("document", doc);
  vi.stubGlobal("navigator", { keyboard });
  const host = new FullscreenHost(doc);
  const calls: string[] = [];
  const c = new FullscreenController(host as unknown as FakeHost & Element, {
    onChange: () => calls.push("change"),
    onError: (m) => calls.push(`error: ${m}`),
    after: () => calls.push("after"),
  });
  return { doc, keyboard, host, calls, c };
}

describe("FullscreenController", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it("enters with the keyboard locked and leaves with it unlocked, following the document", async () => {
    const { doc, keyboard, host, calls, c } = setUp();
    host.connect();
    await c.toggle();
    expect([c.active, keyboard.locks, calls]).toEqual([true, 1, ["change", "after"]]);
    await c.toggle();
    expect([c.active, keyboard.unlocks]).toEqual([false, 1]);
    // Esc leaves full screen in the browser, without the controller being asked.
    await c.toggle();
    doc.change(null);
    expect(c.active).toBe(false);
    expect(host.updates).toBe(4);
    host.disconnect();
    expect(doc.listeners).toBe(0);
  });

  it("says why when the browser refuses, and gives the focus back all the same", async () => {
    const { host, calls, c } = setUp();
    host.connect();
    host.refuse = "Permissions check failed";
    await c.toggle();
    expect(c.active).toBe(false);
    expect(calls).toEqual(["error: Full screen is not available here (Permissions check failed).", "after"]);
  });
});
