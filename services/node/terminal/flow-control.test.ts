import { describe, expect, it } from "vitest";
import { OutputFlowControl } from "./flow-control.js";

/** Flow control between the two watermarks, recording its pauses and resumes. */
function watermarks(highWatermark: number, lowWatermark: number) {
  const calls: string[] = [];
  const flow = new OutputFlowControl({
    highWatermark,
    lowWatermark,
    pause: () => calls.push("pause"),
    resume: () => calls.push("resume"),
  });
  return { calls, flow };
}

describe("OutputFlowControl", () => {
  it("pauses above the high watermark and resumes only below the low one", () => {
    const { calls, flow } = watermarks(100, 20);
    flow.received(60);
    flow.sent(1, 60);
    flow.received(60);
    flow.sent(2, 60);
    expect(calls).toEqual(["pause"]);
    expect(flow.unacknowledged).toBe(120);
    flow.ack(1);
    expect(flow.unacknowledged).toBe(60);
    expect(calls).toEqual(["pause"]);
    flow.ack(1);
    flow.ack(0);
    expect(flow.unacknowledged).toBe(60);
    flow.ack(2);
    expect(flow.unacknowledged).toBe(0);
    expect(calls).toEqual(["pause", "resume"]);
    expect(flow.paused).toBe(false);
  });

  it("counts queued bytes that were never sent as unacknowledged", () => {
    const { calls, flow } = watermarks(100, 20);
    flow.received(150);
    flow.sent(1, 50);
    flow.ack(1);
    expect(flow.unacknowledged).toBe(100);
    expect(calls).toEqual(["pause"]);
  });
});
