import { describe, expect, it } from "vitest";
import { Disposables, onAbort } from "./disposables.js";
import { WakeSignal } from "./wake-signal.js";

describe("WakeSignal", () => {
  it("ends a wait when woken, and keeps a wake that came before the wait until taken", async () => {
    const signal = new WakeSignal();
    const waiting = signal.wait(60_000);
    signal.wake();
    expect(await waiting).toBe(true);
    expect(signal.pending).toBe(true);
    expect(await signal.wait(60_000)).toBe(true);
    expect(signal.take()).toBe(true);
    expect(signal.pending).toBe(false);
    expect(signal.take()).toBe(false);
  });

  it("gives false when the time passes or the abort signal fires, and wakes every waiter", async () => {
    const signal = new WakeSignal();
    expect(await signal.wait(1)).toBe(false);
    const abort = new AbortController();
    const aborted = signal.wait(60_000, abort.signal);
    abort.abort();
    expect(await aborted).toBe(false);
    expect(await signal.wait(60_000, abort.signal)).toBe(false);
    const both = Promise.all([signal.wait(), signal.wait(60_000)]);
    signal.wake();
    expect(await both).toEqual([true, true]);
  });
});

describe("Disposables", () => {
  it("runs every cleanup once, newest first, and at once after disposal", () => {
    const ran: string[] = [];
    const store = new Disposables();
    store.add(() => ran.push("a"));
    store.add(() => ran.push("b"));
    store.dispose();
    store.dispose();
    expect(ran).toEqual(["b", "a"]);
    store.add(() => ran.push("late"));
    expect(ran).toEqual(["b", "a", "late"]);
    expect(store.isDisposed).toBe(true);
  });

  it("onAbort calls its listener once on abort, at once when already aborted, never after removal", () => {
    const calls: string[] = [];
    const first = new AbortController();
    onAbort(first.signal, () => calls.push("first"));
    first.abort();
    first.signal.dispatchEvent(new Event("abort"));
    const removed = new AbortController();
    onAbort(removed.signal, () => calls.push("removed"))();
    removed.abort();
    const already = new AbortController();
    already.abort();
    onAbort(already.signal, () => calls.push("already"));
    expect(calls).toEqual(["first", "already"]);
  });
});
