import { describe, expect, it } from "vitest";
import type { Route } from "../state/routes.js";
import type { Shortcut } from "../state/shortcuts.js";
import { CountingTarget, FakeHost } from "../testing/fake-host.js";
import { ShortcutsController } from "./shortcuts.js";

/** A keydown as the browser sends it (node has no KeyboardEvent). */
function keydown(key: string, modifiers: { ctrlKey?: boolean } = {}): Event {
  return Object.assign(new Event("keydown", { cancelable: true }), {
    key,
    ctrlKey: modifiers.ctrlKey ?? false,
    metaKey: false,
    altKey: false,
  });
}

/** An element-like target: inside a typing place when `closest` finds one. */
class FakeElement extends EventTarget {
  constructor(private readonly inside: boolean) {
    super();
  }
  closest(selector: string): unknown {
    return this.inside && selector.includes("textarea") ? this : null;
  }
}

describe("ShortcutsController", () => {
  function setUp(taken = true) {
    const host = new FakeHost();
    const events = new CountingTarget();
    const ran: Shortcut[] = [];
    const route: Route = { page: "sessions", tab: "terminal" };
    new ShortcutsController(host, {
      route: () => route,
      loggedIn: () => true,
      run: (shortcut) => {
        ran.push(shortcut);
        return taken;
      },
      events,
    });
    return { host, events, ran };
  }

  it("runs the shortcut a key means and takes the key, only while connected", () => {
    const { host, events, ran } = setUp();
    host.connect();
    const slash = keydown("/");
    events.dispatchEvent(slash);
    const n = keydown("n");
    events.dispatchEvent(n);
    expect(ran).toEqual(["search", "new-session"]);
    expect(slash.defaultPrevented).toBe(true);
    expect(n.defaultPrevented).toBe(true);
    host.disconnect();
    expect(events.listeners).toBe(0);
    events.dispatchEvent(keydown("n"));
    expect(ran).toHaveLength(2);
  });

  it("leaves keys that mean nothing, modified keys, typing, and keys already taken", () => {
    const { host, events, ran } = setUp();
    host.connect();
    const plain = keydown("x");
    events.dispatchEvent(plain);
    events.dispatchEvent(keydown("n", { ctrlKey: true }));
    const typed = keydown("n");
    Object.defineProperty(typed, "target", { value: new FakeElement(true) });
    events.dispatchEvent(typed);
    const taken = keydown("n");
    taken.preventDefault();
    events.dispatchEvent(taken);
    expect(ran).toEqual([]);
    expect(plain.defaultPrevented).toBe(false);
    const outside = keydown("n");
    Object.defineProperty(outside, "target", { value: new FakeElement(false) });
    events.dispatchEvent(outside);
    expect(ran).toEqual(["new-session"]);
    host.disconnect();
  });

  it("lets the key through when the shortcut could not be carried out", () => {
    const { host, events, ran } = setUp(false);
    host.connect();
    const slash = keydown("/");
    events.dispatchEvent(slash);
    expect(ran).toEqual(["search"]);
    expect(slash.defaultPrevented).toBe(false);
    host.disconnect();
  });
});
