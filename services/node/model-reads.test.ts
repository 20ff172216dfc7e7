import { describe, expect, it } from "vitest";
import { ModelReads } from "./model-reads.js";

/** A read the test finishes by hand, so overlaps and ordering are explicit. */
interface HeldRead {
  readonly n: number;
  finish(): void;
  fail(err: Error): void;
}

function setup(options: { live?: boolean; maxAgeMs?: number } = {}) {
  let clock = 1_000;
  let live = options.live ?? true;
  let count = 0;
  let active = 0;
  let maxActive = 0;
  const held: HeldRead[] = [];
  const reads = new ModelReads<number>({
    read: () =>
      new Promise<number>((resolve, reject) => {
        const n = ++count;
        active++;
        maxActive = Math.max(maxActive, active);
        held.push({
          n,
          finish: () => {
            active--;
            resolve(n);
          },
          fail: (err) => {
            active--;
            reject(err);
          },
        });
      }),
    live: () => live,
    maxAgeMs: options.maxAgeMs ?? 100,
    now: () => clock,
  });
  /** Finishes the oldest unfinished read once it has started (reads start on a later tick when queued). */
  const finishNext = async () => {
    for (let i = 0; i < 10 && held.length === 0; i++) await Promise.resolve();
    const next = held.shift();
    if (!next) throw new Error("no read is running");
    next.finish();
    await Promise.resolve();
  };
  return {
    reads,
    finishNext,
    held,
    readsStarted: () => count,
    maxActive: () => maxActive,
    advance: (ms: number) => {
      clock += ms;
    },
    setLive: (value: boolean) => {
      live = value;
    },
  };
}

describe("ModelReads", () => {
  it("shares one read among concurrent callers", async () => {
    const t = setup();
    const a = t.reads.refresh();
    const b = t.reads.refresh();
    const c = t.reads.current();
    await t.finishNext();
    expect(await Promise.all([a, b, c])).toEqual([1, 1, 1]);
    expect(t.readsStarted()).toBe(1);
  });

  it("answers from the model while the watch loop runs and the model is fresh", async () => {
    const t = setup();
    const first = t.reads.refresh();
    await t.finishNext();
    expect(await first).toBe(1);
    expect(await t.reads.current()).toBe(1);
    t.advance(100);
    expect(await t.reads.current()).toBe(1);
    expect(t.readsStarted()).toBe(1);
  });

  it("reads again when the model is too old, or the watch loop is not running", async () => {
    const t = setup();
    const first = t.reads.refresh();
    await t.finishNext();
    await first;
    t.advance(101);
    const old = t.reads.current();
    await t.finishNext();
    expect(await old).toBe(2);
    t.setLive(false);
    const unwatched = t.reads.current();
    await t.finishNext();
    expect(await unwatched).toBe(3);
  });

  it("never answers from a model read before a change made through the API", async () => {
    const t = setup();
    const first = t.reads.refresh();
    await t.finishNext();
    await first;
    t.reads.changed();
    const after = t.reads.current();
    await t.finishNext();
    expect(await after).toBe(2);
    expect(await t.reads.current()).toBe(2);
  });

  it("does not reuse a read that began before a change: it waits for it, then reads once more for everyone", async () => {
    const t = setup();
    const before = t.reads.refresh();
    t.reads.changed();
    const afterA = t.reads.current();
    const afterB = t.reads.refresh();
    t.reads.changed();
    const afterC = t.reads.refresh();
    // The second read has not started while the first runs: reads never overlap.
    expect(t.readsStarted()).toBe(1);
    await t.finishNext();
    expect(await before).toBe(1);
    await t.finishNext();
    expect(await Promise.all([afterA, afterB, afterC])).toEqual([2, 2, 2]);
    expect(t.readsStarted()).toBe(2);
    expect(t.maxActive()).toBe(1);
  });

  it("gives the watch loop's look a read that begins after any read in flight, never the running one", async () => {
    const t = setup();
    // An API read runs; a log is written meanwhile and wakes the loop: the running read may have passed it.
    const api = t.reads.refresh();
    const look = t.reads.next("logs");
    const again = t.reads.next("logs");
    expect(t.readsStarted()).toBe(1);
    await t.finishNext();
    expect(await api).toBe(1);
    await t.finishNext();
    expect(await Promise.all([look, again])).toEqual([2, 2]);
    // With nothing in flight it is a read of its own, of the kind asked.
    const alone = t.reads.next("logs");
    await t.finishNext();
    expect(await alone).toBe(3);
    expect(t.maxActive()).toBe(1);
  });

  it("lets a failed read fail its callers only, and reads again next time", async () => {
    const t = setup();
    const failing = t.reads.refresh();
    for (let i = 0; i < 10 && t.held.length === 0; i++) await Promise.resolve();
    t.held.shift()?.fail(new Error("tmux is wedged"));
    await expect(failing).rejects.toThrow("tmux is wedged");
    const next = t.reads.current();
    await t.finishNext();
    expect(await next).toBe(2);
  });
});
