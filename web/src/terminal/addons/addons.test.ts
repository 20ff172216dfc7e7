import { afterEach, describe, expect, it, vi } from "vitest";
import { CountingTarget } from "../../testing/fake-host.js";
import { FakeTerminal } from "../../testing/fake-terminal.js";
import { AltScreenGuardAddon, isOnlyAltScreen } from "./alt-screen-guard.js";
import { EchoMeterAddon } from "./echo-meter.js";
import { Osc52Addon } from "./osc52-addon.js";
import { REFRESH_SCROLL_LINES, ScrollbackRefreshAddon } from "./scrollback-refresh.js";

function key(k: string, timeStamp: number, mods: Partial<Record<"ctrlKey" | "metaKey" | "altKey", boolean>> = {}) {
  const e = new Event("keydown");
  Object.defineProperties(e, {
    key: { value: k },
    timeStamp: { value: timeStamp },
    ctrlKey: { value: mods.ctrlKey ?? false },
    metaKey: { value: mods.metaKey ?? false },
    altKey: { value: mods.altKey ?? false },
  });
  return e;
}

describe("AltScreenGuardAddon", () => {
  it("swallows DECSET/DECRST of the alternate screen only, and unregisters on dispose", () => {
    const term = new FakeTerminal();
    const addon = new AltScreenGuardAddon();
    addon.activate(term.asTerminal);
    const set = term.csi.get("?h") as unknown as (p: (number | number[])[]) => boolean;
    expect(set([1049])).toBe(true);
    expect(set([47, 1047])).toBe(true);
    // Other modes (or a mix) pass on to xterm.
    expect(set([1049, 25])).toBe(false);
    expect(set([2004])).toBe(false);
    expect(isOnlyAltScreen([])).toBe(false);
    expect(term.csi.size).toBe(2);
    addon.dispose();
    expect(term.csi.size).toBe(0);
  });
});

describe("Osc52Addon", () => {
  it("hands a program's OSC 52 text to onCopy, answers no clipboard read, and consumes every OSC 52", () => {
    const term = new FakeTerminal();
    const copied: string[] = [];
    const addon = new Osc52Addon((t) => copied.push(t));
    addon.activate(term.asTerminal);
    const handler = term.osc.get(52) as unknown as (data: string) => boolean;
    expect(handler(`c;${btoa("hello")}`)).toBe(true);
    expect(handler("c;?")).toBe(true);
    expect(handler("c;%%%")).toBe(true);
    expect(copied).toEqual(["hello"]);
    addon.dispose();
    expect(term.osc.size).toBe(0);
  });
});

describe("EchoMeterAddon", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("times a printable key to the next output written, ignoring modified keys and late output", () => {
    const term = new FakeTerminal();
    const host = new CountingTarget();
    let now = 0;
    let samples = 0;
    const meter = new EchoMeterAddon(
      host,
      () => samples++,
      () => now,
    );
    meter.activate(term.asTerminal);
    host.dispatchEvent(key("a", 100));
    now = 112;
    let done = 0;
    meter.write(new Uint8Array([97]), () => done++);
    term.pendingWrites.shift()?.();
    expect(meter.samples).toEqual([12]);
    expect(meter.median).toBe(12);
    expect(done).toBe(1);
    // Ctrl+C is no echo to time.
    host.dispatchEvent(key("c", 200, { ctrlKey: true }));
    meter.write(new Uint8Array([3]), () => done++);
    term.pendingWrites.shift()?.();
    expect(meter.samples).toEqual([12]);
    // Output more than 2 s after the key is not its echo.
    host.dispatchEvent(key("b", 300));
    now = 2_400;
    meter.write(new Uint8Array([98]), () => done++);
    term.pendingWrites.shift()?.();
    expect(meter.samples).toEqual([12]);
    expect(samples).toBe(1);
    expect(done).toBe(3);
    meter.dispose();
    expect(host.listeners).toBe(0);
  });

  it("shows the median of the newest samples", () => {
    const term = new FakeTerminal();
    const host = new CountingTarget();
    let now = 0;
    const meter = new EchoMeterAddon(
      host,
      () => {},
      () => now,
    );
    meter.activate(term.asTerminal);
    for (const sample of [5, 50, 7]) {
      host.dispatchEvent(key("x", 1_000));
      now = 1_000 + sample;
      meter.write(new Uint8Array([120]), () => {});
      term.pendingWrites.shift()?.();
    }
    expect(meter.median).toBe(7);
  });
});

describe("ScrollbackRefreshAddon", () => {
  function setUp() {
    const term = new FakeTerminal();
    const host = new CountingTarget();
    let attached = true;
    let reattached = 0;
    const addon = new ScrollbackRefreshAddon({
      element: host,
      isAttached: () => attached,
      reattach: () => reattached++,
    });
    addon.activate(term.asTerminal);
    const wheelUp = () => host.dispatchEvent(Object.assign(new Event("wheel"), { deltaY: -100 }));
    return {
      term,
      host,
      addon,
      wheelUp,
      reattached: () => reattached,
      detach: () => {
        attached = false;
      },
    };
  }

  it("does nothing after a redraw (fewer line feeds than the screen has rows)", () => {
    const { term, wheelUp, reattached } = setUp();
    term.lineFeed(term.rows);
    wheelUp();
    expect(reattached()).toBe(0);
  });

  it("attaches again on scrolling back after new output, once per burst, and returns to the gesture's lines", () => {
    const { term, addon, wheelUp, reattached } = setUp();
    term.lineFeed(term.rows + 1);
    wheelUp();
    wheelUp();
    expect(reattached()).toBe(1);
    // Meanwhile the view scrolled further back than the gesture: it returns there.
    term.buffer.active.viewportY = 90;
    const back = addon.takeScrollBack();
    expect(back).toBe(10);
    addon.historyWritten(back);
    expect(term.scrolled).toEqual([-10]);
    // The history's own lines are not new output.
    wheelUp();
    expect(reattached()).toBe(1);
    // With no refresh under way, a new attachment keeps the view at the bottom.
    expect(addon.takeScrollBack()).toBe(0);
  });

  it("returns at least the gesture's lines, and a swipe down counts as scrolling back", () => {
    const { term, host, addon, reattached } = setUp();
    term.lineFeed(100);
    const touch = (type: string, y: number) =>
      host.dispatchEvent(Object.assign(new Event(type), { touches: [{ clientY: y }] }));
    touch("touchstart", 100);
    touch("touchmove", 105);
    expect(reattached()).toBe(0);
    touch("touchmove", 113);
    expect(reattached()).toBe(1);
    expect(addon.takeScrollBack()).toBe(REFRESH_SCROLL_LINES);
  });

  it("leaves the wheel alone in the alternate buffer, with mouse reporting, away from the bottom, or detached", () => {
    const cases: Array<(t: ReturnType<typeof setUp>) => void> = [
      (t) => {
        t.term.buffer.active.type = "alternate";
      },
      (t) => {
        t.term.modes.mouseTrackingMode = "vt200";
      },
      (t) => {
        t.term.buffer.active.viewportY = 50;
      },
      (t) => t.detach(),
    ];
    for (const arrange of cases) {
      const t = setUp();
      t.term.lineFeed(100);
      arrange(t);
      t.wheelUp();
      expect(t.reattached()).toBe(0);
    }
  });

  it("Shift+PageUp's refresh asks for the page's lines; dispose removes every listener", () => {
    const { term, host, addon, reattached } = setUp();
    term.lineFeed(100);
    addon.refresh(term.rows - 1);
    expect(reattached()).toBe(1);
    expect(addon.takeScrollBack()).toBe(term.rows - 1);
    addon.dispose();
    expect(host.listeners).toBe(0);
    expect(term.lineFeedListeners).toBe(0);
  });
});
