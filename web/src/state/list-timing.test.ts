import { describe, expect, it } from "vitest";
import { FakeHost } from "../testing/fake-host.js";
import { FIRST_LIST_MARK, ListTiming, MAX_APPLY_SAMPLES } from "./list-timing.js";

describe("ListTiming", () => {
  function setUp() {
    const host = new FakeHost();
    let listRendered!: () => void;
    const list = { updateComplete: new Promise<void>((resolve) => (listRendered = resolve)) };
    let warmed = 0;
    const timing = new ListTiming(host, { list: () => list, firstListShown: () => warmed++ });
    return { host, timing, listRendered: () => listRendered(), warmed: () => warmed };
  }

  it("times an applied event once the host and then the list have rendered it", async () => {
    const { host, timing, listRendered } = setUp();
    const start = performance.now();
    timing.applied(3, start);
    expect(host.updates).toBe(1);
    await host.updateComplete;
    await Promise.resolve();
    expect(timing.samples).toEqual([]);
    listRendered();
    await expect.poll(() => timing.samples.length).toBe(1);
    expect(timing.samples[0]).toBeGreaterThanOrEqual(0);
  });

  it("times an event that changed nothing only before the first list is shown", async () => {
    const { host, timing, listRendered, warmed } = setUp();
    listRendered();
    timing.applied(0, performance.now());
    await expect.poll(() => timing.samples.length).toBe(1);
    timing.listRendered(false);
    expect(warmed()).toBe(0);
    timing.listRendered(true);
    timing.listRendered(true);
    expect(warmed()).toBe(1);
    expect(performance.getEntriesByName(FIRST_LIST_MARK)).toHaveLength(1);
    timing.applied(0, performance.now());
    expect(host.updates).toBe(1);
    timing.applied(1, performance.now());
    await expect.poll(() => timing.samples.length).toBe(2);
  });

  it("keeps the newest MAX_APPLY_SAMPLES samples", async () => {
    const { timing, listRendered } = setUp();
    listRendered();
    // The first starts a minute back, so its sample is the one far longer than the rest.
    timing.applied(1, performance.now() - 60_000);
    for (let i = 0; i < MAX_APPLY_SAMPLES; i++) timing.applied(1, performance.now());
    await expect.poll(() => timing.samples.length).toBe(MAX_APPLY_SAMPLES);
    await Promise.resolve();
    expect(timing.samples.length).toBe(MAX_APPLY_SAMPLES);
    // The oldest was dropped.
    expect(Math.max(...timing.samples)).toBeLessThan(60_000);
  });
});
