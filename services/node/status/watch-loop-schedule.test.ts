import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createLogger } from "../../common/log.js";
import {
  type LookKind,
  WATCH_HEARTBEAT_MS,
  WATCH_IDLE_INTERVAL_MS,
  WATCH_INTERVAL_MS,
  WatchLoop,
} from "./watch-loop.js";

/** A loop over counters instead of tmux: how often it read, what it was told to send. */
function loopUnderTest() {
  const state = {
    reads: 0,
    /** Each read's kind, in order. */
    kinds: [] as LookKind[],
    heartbeats: 0,
    watched: true,
    paneChanged: false,
    watching: false,
    fast: false,
    wake: (): void => undefined,
  };
  const loop = new WatchLoop({
    inspector: {
      get needsFastPoll() {
        return state.fast;
      },
      watchChanges: (wake) => {
        state.wake = wake;
        state.watching = true;
        return () => {
          state.watching = false;
        };
      },
    },
    probe: { mark: async () => undefined, changed: async () => state.paneChanged },
    read: async (kind) => {
      state.reads++;
      state.kinds.push(kind);
    },
    model: () => undefined,
    hasPanes: () => true,
    watched: () => state.watched,
    heartbeat: () => {
      state.heartbeats++;
    },
    log: createLogger("test", "error", () => undefined),
  });
  return { loop, state };
}

describe("the watch loop's schedule", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("looks every WATCH_IDLE_INTERVAL_MS while settled, WATCH_INTERVAL_MS while not, and at once when woken", async () => {
    const { loop, state } = loopUnderTest();
    loop.start();
    await vi.advanceTimersByTimeAsync(0);
    expect([state.reads, state.watching, loop.isRunning]).toEqual([1, true, true]);
    await vi.advanceTimersByTimeAsync(WATCH_IDLE_INTERVAL_MS - 10);
    expect(state.reads).toBe(1);
    await vi.advanceTimersByTimeAsync(10);
    expect(state.reads).toBe(2);
    // Woken by a file event, and by a change made through the API: each looks once the last look is
    // 50 ms old, not at the next interval.
    state.wake();
    await vi.advanceTimersByTimeAsync(50);
    expect(state.reads).toBe(3);
    state.fast = true;
    loop.wake();
    await vi.advanceTimersByTimeAsync(50);
    expect(state.reads).toBe(4);
    await vi.advanceTimersByTimeAsync(WATCH_INTERVAL_MS - 1);
    expect(state.reads).toBe(4);
    await vi.advanceTimersByTimeAsync(1);
    expect(state.reads).toBe(5);
    await loop.close();
  });

  it("looks early when the probe sees a pane created or ended, and keeps looks 50 ms apart", async () => {
    const { loop, state } = loopUnderTest();
    loop.start();
    await vi.advanceTimersByTimeAsync(0);
    state.paneChanged = true;
    await vi.advanceTimersByTimeAsync(WATCH_INTERVAL_MS);
    expect(state.reads).toBe(2);
    state.paneChanged = false;
    // Woken many times at once: one more look, not one per wake, and not before the gap.
    for (let i = 0; i < 5; i++) state.wake();
    await vi.advanceTimersByTimeAsync(49);
    expect(state.reads).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(state.reads).toBe(3);
    for (let i = 0; i < 5; i++) state.wake();
    await vi.advanceTimersByTimeAsync(10);
    expect(state.reads).toBe(3);
    await vi.advanceTimersByTimeAsync(40);
    expect(state.reads).toBe(4);
    await vi.advanceTimersByTimeAsync(WATCH_INTERVAL_MS);
    expect(state.reads).toBe(4);
    await loop.close();
  });

  it("asks tmux on its own schedule, on an API change and on a pane change; a log write alone reads the logs", async () => {
    const { loop, state } = loopUnderTest();
    loop.start();
    await vi.advanceTimersByTimeAsync(0);
    // Log writes between two scheduled looks: the logs only, however many.
    for (let i = 0; i < 3; i++) {
      state.wake();
      await vi.advanceTimersByTimeAsync(100);
    }
    expect(state.kinds).toEqual(["full", "logs", "logs", "logs"]);
    // A change made through the API, and a pane the probe saw created: tmux is read.
    loop.wake();
    await vi.advanceTimersByTimeAsync(50);
    state.paneChanged = true;
    state.wake();
    await vi.advanceTimersByTimeAsync(50);
    state.paneChanged = false;
    expect(state.kinds.slice(4)).toEqual(["full", "full"]);
    // The scheduled look stays due an interval after the last full one, log writes or not.
    state.wake();
    await vi.advanceTimersByTimeAsync(WATCH_IDLE_INTERVAL_MS - 100);
    expect(state.kinds.slice(6)).toEqual(["logs"]);
    await vi.advanceTimersByTimeAsync(100);
    expect(state.kinds.slice(6)).toEqual(["logs", "full"]);
    // Past the interval since the last full look, a log write's look is a full one.
    state.fast = true;
    await vi.advanceTimersByTimeAsync(WATCH_INTERVAL_MS);
    state.wake();
    await vi.advanceTimersByTimeAsync(60);
    state.wake();
    await vi.advanceTimersByTimeAsync(60);
    expect(state.kinds.slice(8)).toEqual(["full", "logs"]);
    await loop.close();
  });

  it("sends a heartbeat after WATCH_HEARTBEAT_MS without a change, and stops once nobody watches", async () => {
    const { loop, state } = loopUnderTest();
    loop.start();
    await vi.advanceTimersByTimeAsync(WATCH_HEARTBEAT_MS + WATCH_IDLE_INTERVAL_MS);
    expect(state.heartbeats).toBe(1);
    state.watched = false;
    state.wake();
    await vi.advanceTimersByTimeAsync(WATCH_IDLE_INTERVAL_MS);
    expect([loop.isRunning, state.watching]).toEqual([false, false]);
    const reads = state.reads;
    await vi.advanceTimersByTimeAsync(WATCH_IDLE_INTERVAL_MS * 3);
    expect(state.reads).toBe(reads);
    await loop.close();
  });
});
