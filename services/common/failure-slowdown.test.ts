import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { FailureSlowdown } from "./failure-slowdown.js";

/** The fake-clock times (since `start`) at which `promises` settle, running the clock until they all have. */
async function settleTimes(promises: Promise<unknown>[], start: number, runForMs: number): Promise<number[]> {
  const times = promises.map((p) => p.then(() => Date.now() - start));
  await vi.advanceTimersByTimeAsync(runForMs);
  return Promise.all(times);
}

describe("FailureSlowdown", () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  // The global budget out of the way unless a test is about it.
  const options = {
    freeFailures: 2,
    firstDelayMs: 100,
    maxDelayMs: 400,
    memoryMs: 10_000,
    globalFailuresPerSecond: 1_000_000,
    globalBurst: 1_000_000,
  };
  const count = (p: Promise<{ count: number }>) => p.then((o) => o.count);

  it("answers the free failures at once, then waits twice as long each time, up to the maximum", async () => {
    const slowdown = new FailureSlowdown(options);
    expect(await count(slowdown.failed("a"))).toBe(1);
    expect(await count(slowdown.failed("a"))).toBe(2);
    const waits: number[] = [];
    for (let i = 0; i < 4; i++) {
      const [wait] = await settleTimes([slowdown.failed("a")], Date.now(), 1_000);
      waits.push(wait ?? -1);
    }
    expect(waits).toEqual([100, 200, 400, 400]);
  });

  it("answers one peer's parallel failures one after another, and other peers independently", async () => {
    const slowdown = new FailureSlowdown(options);
    await slowdown.failed("a");
    await slowdown.failed("a");
    const start = Date.now();
    const parallel = [slowdown.failed("a"), slowdown.failed("a"), slowdown.failed("a")];
    expect(slowdown.heldFailures).toBe(3);
    expect(await count(slowdown.failed("b"))).toBe(1);
    expect(await settleTimes(parallel, start, 1_000)).toEqual([100, 300, 700]);
    expect(slowdown.heldFailures).toBe(0);
  });

  it("forgets a peer after a quiet memory window", async () => {
    const slowdown = new FailureSlowdown(options);
    for (let i = 0; i < 2; i++) await slowdown.failed("a");
    vi.advanceTimersByTime(options.memoryMs + 1);
    expect(await count(slowdown.failed("a"))).toBe(1);
  });

  it("lets a held failure go at once when its caller goes away", async () => {
    const slowdown = new FailureSlowdown({ ...options, firstDelayMs: 60_000, maxDelayMs: 60_000 });
    await slowdown.failed("a");
    await slowdown.failed("a");
    const gone = new AbortController();
    const held = slowdown.failed("a", gone.signal);
    expect(slowdown.heldFailures).toBe(1);
    gone.abort();
    expect(await count(held)).toBe(3);
    expect(slowdown.heldFailures).toBe(0);
  });

  it("keeps its memory bounded: peers beyond the limit are forgotten oldest first, holds beyond it overflow", async () => {
    const slowdown = new FailureSlowdown({ ...options, freeFailures: 0, maxTrackedPeers: 3, maxHeldFailures: 2 });
    const held = ["p1", "p2", "p3", "p4"].map((peer) => slowdown.failed(peer));
    expect(slowdown.trackedPeers).toBe(3);
    expect(slowdown.heldFailures).toBe(2);
    // p1 was forgotten: its next failure counts from one again.
    expect(await Promise.race([held[3], Promise.resolve("held")])).toEqual({ count: 1, overflow: true });
    vi.advanceTimersByTime(options.firstDelayMs);
    await Promise.all(held);
    const again = count(slowdown.failed("p1"));
    expect(slowdown.heldFailures).toBe(1);
    vi.advanceTimersByTime(options.firstDelayMs);
    expect(await again).toBe(1);
  });

  it("holds at most a few failures of one peer: the others overflow at once, using up no budget", async () => {
    const slowdown = new FailureSlowdown({ ...options, freeFailures: 0, maxHeldPerPeer: 2 });
    const start = Date.now();
    const first = [slowdown.failed("a"), slowdown.failed("a")];
    expect(await slowdown.failed("a")).toEqual({ count: 3, overflow: true });
    expect(slowdown.heldFailures).toBe(2);
    expect(await settleTimes(first, start, 1_000)).toEqual([100, 300]);
    // The overflow did not push the peer's next answer further out.
    const next = Date.now();
    expect(await settleTimes([slowdown.failed("a")], next, 1_000)).toEqual([400]);
  });

  it("answers all peers' failures within a global budget per second, whatever their addresses", async () => {
    const slowdown = new FailureSlowdown({
      ...options,
      freeFailures: 1_000,
      globalFailuresPerSecond: 10,
      globalBurst: 3,
    });
    const start = Date.now();
    const many = Array.from({ length: 6 }, (_, i) => slowdown.failed(`127.0.1.${i}`));
    // Four at once (the burst and the one it admits), then one each 100 ms.
    expect(await settleTimes(many, start, 1_000)).toEqual([0, 0, 0, 0, 100, 200]);
    vi.advanceTimersByTime(1_000);
    expect(await settleTimes([slowdown.failed("127.0.2.1")], Date.now(), 1_000)).toEqual([0]);
  });
});
