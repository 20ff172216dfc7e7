import type { FitAddon } from "@xterm/addon-fit";
import type { Terminal } from "@xterm/xterm";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Osc52Choice, Osc52ChoiceStore } from "../terminal/osc52-consent.js";
import { FakeHost } from "../testing/fake-host.js";
import { ClipboardOfferController } from "./clipboard-offer.js";
import { TerminalFitController } from "./terminal-fit.js";

/** The person's OSC 52 answers, kept in memory. */
function memoryChoices(
  initial: Record<string, Osc52Choice> = {},
): Osc52ChoiceStore & { map: Map<string, Osc52Choice> } {
  const map = new Map(Object.entries(initial));
  return { map, get: (s) => map.get(s), set: (s, c) => void map.set(s, c) };
}

describe("ClipboardOfferController", () => {
  it("copies at once when the browser allows it, else keeps the text for a tap", async () => {
    const host = new FakeHost();
    let allowed = false;
    const copied: string[] = [];
    const toasts: string[] = [];
    const c = new ClipboardOfferController(host, {
      copy: async (t) => {
        if (allowed) copied.push(t);
        return allowed;
      },
      toast: (m) => toasts.push(m),
      session: () => "nodes/local/sessions/a",
      choices: memoryChoices(),
    });
    await c.offer("secret");
    expect(c.pending).toBe("secret");
    expect(copied).toEqual([]);
    await c.copyPending();
    expect(c.pending).toBe("secret");
    expect(toasts.at(-1)).toContain("refused");
    allowed = true;
    await c.copyPending();
    expect(copied).toEqual(["secret"]);
    expect(c.pending).toBe("");
    await c.offer("next");
    expect(copied).toEqual(["secret", "next"]);
    expect(toasts.at(-1)).toContain("copied text to your clipboard");
  });

  it("drops a waiting offer when the terminal goes", async () => {
    const host = new FakeHost();
    const c = new ClipboardOfferController(host, {
      copy: async () => false,
      toast: () => {},
      session: () => "nodes/local/sessions/a",
      choices: memoryChoices(),
    });
    await c.offer("x");
    host.disconnect();
    expect(c.pending).toBe("");
  });

  it("asks before a session's first copy, remembers the answer, and copies only what was allowed", async () => {
    const host = new FakeHost();
    const copied: string[] = [];
    let session = "nodes/local/sessions/a";
    const choices = memoryChoices({ "nodes/local/sessions/denied": "deny" });
    const c = new ClipboardOfferController(host, {
      copy: async (t) => {
        copied.push(t);
        return true;
      },
      toast: () => {},
      session: () => session,
      choices,
    });
    c.request("first");
    expect([c.asking, copied]).toEqual(["first", []]);
    const updates = host.updates;
    c.answer("allow");
    expect(host.updates).toBeGreaterThan(updates);
    await vi.waitFor(() => expect(copied).toEqual(["first"]));
    expect([c.asking, choices.map.get(session)]).toEqual(["", "allow"]);
    c.request("second");
    await vi.waitFor(() => expect(copied).toEqual(["first", "second"]));
    expect(c.asking).toBe("");
    // A session the person refused drops its copies without asking again.
    session = "nodes/local/sessions/denied";
    c.request("never");
    expect(c.asking).toBe("");
    // Denied at the question: remembered, nothing copied.
    session = "nodes/local/sessions/b";
    c.request("secret");
    c.answer("deny");
    expect([c.asking, choices.map.get(session)]).toEqual(["", "deny"]);
    await Promise.resolve();
    expect(copied).toEqual(["first", "second"]);
  });
});

describe("TerminalFitController", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.stubGlobal("requestAnimationFrame", (cb: () => void) => setTimeout(cb, 0));
    vi.stubGlobal(
      "ResizeObserver",
      class {
        observe(): void {}
        disconnect(): void {}
      },
    );
  });
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.useRealTimers();
  });

  function setUp() {
    const host = new FakeHost();
    const term = { cols: 80, rows: 24, resize: vi.fn(), options: { fontSize: 13 } };
    let proposed: { cols: number; rows: number } | undefined = { cols: 100, rows: 30 };
    const requests: Array<[number, number, boolean]> = [];
    const errors: string[] = [];
    let fail = false;
    const scroller = { clientWidth: 800, clientHeight: 600, scrollHeight: 600, scrollTop: 0 };
    const fit = new TerminalFitController(host, {
      terminal: () => ({ term: term as unknown as Terminal, fit: { proposeDimensions: () => proposed } as FitAddon }),
      active: () => true,
      scroller: () => scroller as HTMLElement,
      requestSize: (size, takeOver) => {
        requests.push([size.cols, size.rows, takeOver]);
        return fail ? Promise.reject(new Error("gone")) : Promise.resolve();
      },
      onError: (m) => errors.push(m),
    });
    return {
      host,
      fit,
      term,
      scroller,
      requests,
      errors,
      propose: (p: typeof proposed) => {
        proposed = p;
      },
      failNext: () => {
        fail = true;
      },
    };
  }

  it("asks for the page's size after an attachment at another size, once, and applies it as owner", async () => {
    const t = setUp();
    t.fit.attached({ cols: 80, rows: 24 }, true);
    t.fit.schedule();
    await vi.advanceTimersByTimeAsync(200);
    expect(t.requests).toEqual([[100, 30, false]]);
    expect(t.term.resize).toHaveBeenLastCalledWith(100, 30);
    // The same size again is not asked for.
    t.fit.schedule();
    await vi.advanceTimersByTimeAsync(200);
    expect(t.requests).toHaveLength(1);
  });

  it("as another client's viewer keeps the window's size; Take over asks with takeOver", async () => {
    const t = setUp();
    t.fit.attached({ cols: 120, rows: 40 }, false);
    expect(t.term.resize).toHaveBeenLastCalledWith(120, 40);
    await vi.advanceTimersByTimeAsync(200);
    expect(t.requests).toEqual([[100, 30, false]]);
    expect(t.term.resize).toHaveBeenCalledTimes(1);
    // The window is wider than the 100 columns that fit: the font shrinks until its 120 do (13 × 100 / 120).
    expect(t.term.options.fontSize).toBe(10.5);
    t.fit.takeOver();
    expect(t.term.options.fontSize).toBe(13);
    expect(t.requests.at(-1)).toEqual([100, 30, true]);
  });

  it("shrinks the font no further than 6 px for a very wide window, and not at all as the owner", async () => {
    const t = setUp();
    t.fit.attached({ cols: 400, rows: 40 }, false);
    await vi.advanceTimersByTimeAsync(200);
    expect(t.term.options.fontSize).toBe(6);
    t.fit.applyWindow({ cols: 400, rows: 40 }, true);
    expect(t.term.options.fontSize).toBe(13);
  });

  it("asks for 24 rows at least, and a box shorter than the window shows the window's bottom", async () => {
    const t = setUp();
    t.fit.attached({ cols: 80, rows: 24 }, true);
    // A phone's terminal below a prompt card: room for 9 rows.
    t.propose({ cols: 51, rows: 9 });
    t.scroller.clientHeight = 150;
    t.scroller.scrollHeight = 400;
    await vi.advanceTimersByTimeAsync(200);
    expect(t.requests).toEqual([[51, 24, false]]);
    expect(t.term.resize).toHaveBeenLastCalledWith(51, 24);
    expect(t.scroller.scrollTop).toBe(400);
  });

  it("bounds absurd sizes, falls back to 80×24 before any measure, and reports a failed request", async () => {
    const t = setUp();
    t.propose(undefined);
    expect(t.fit.measure()).toEqual({ cols: 80, rows: 24 });
    t.propose({ cols: 5000, rows: 3000 });
    expect(t.fit.measure()).toEqual({ cols: 1000, rows: 1000 });
    t.failNext();
    t.fit.takeOver();
    await vi.advanceTimersByTimeAsync(0);
    expect(t.errors).toHaveLength(1);
    expect(t.errors[0]).toMatch(/^Could not take over the size: /);
  });
});
