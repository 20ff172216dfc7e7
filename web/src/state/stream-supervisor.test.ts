import { describe, expect, it, vi } from "vitest";
import { retryDelay, type StreamState, StreamSupervisor } from "./stream-supervisor.js";

/** A stream the test feeds by hand; it ends or fails when told, and stops when its signal aborts. */
class FakeStream {
  private readonly queue: Array<{ value?: number; error?: unknown; end?: boolean }> = [];
  private wake: (() => void) | undefined;
  aborted = false;

  push(item: { value?: number; error?: unknown; end?: boolean }): void {
    this.queue.push(item);
    this.wake?.();
  }

  async *run(signal: AbortSignal): AsyncGenerator<number> {
    signal.addEventListener("abort", () => {
      this.aborted = true;
      this.wake?.();
    });
    for (;;) {
      if (this.aborted) throw new DOMException("aborted", "AbortError");
      const item = this.queue.shift();
      if (!item) {
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
        continue;
      }
      if (item.error !== undefined) throw item.error;
      if (item.end) return;
      if (item.value !== undefined) yield item.value;
    }
  }
}

function supervised(options: { livenessMs?: number; fatal?: (e: unknown) => boolean; stopAt?: number } = {}) {
  const streams: FakeStream[] = [];
  const received: number[] = [];
  const states: StreamState["kind"][] = [];
  const supervisor = new StreamSupervisor<number>({
    open: (signal) => {
      const s = new FakeStream();
      streams.push(s);
      return s.run(signal);
    },
    onMessage: (m) => {
      received.push(m);
      return m === options.stopAt ? "stop" : undefined;
    },
    onState: (s) => states.push(s.kind),
    isFatal: options.fatal,
    livenessMs: options.livenessMs ?? 60_000,
    retryDelay: () => 5,
  });
  return { supervisor, streams, received, states };
}

describe("StreamSupervisor", () => {
  it("reopens a failed or ended stream after a delay, and goes live on the first message", async () => {
    const { supervisor, streams, received, states } = supervised();
    supervisor.start();
    streams[0]?.push({ value: 1 });
    await vi.waitFor(() => expect(received).toEqual([1]));
    streams[0]?.push({ error: new Error("connection reset") });
    await vi.waitFor(() => expect(streams).toHaveLength(2));
    streams[1]?.push({ value: 2 });
    streams[1]?.push({ end: true });
    await vi.waitFor(() => expect(streams).toHaveLength(3));
    expect(received).toEqual([1, 2]);
    expect(states.slice(0, 6)).toEqual(["connecting", "live", "waiting", "connecting", "live", "waiting"]);
    supervisor.stop();
    expect(streams[2]?.aborted).toBe(true);
  });

  it("treats silence longer than the liveness limit as a dead connection", async () => {
    const { supervisor, streams } = supervised({ livenessMs: 30 });
    supervisor.start();
    await vi.waitFor(() => expect(streams.length).toBeGreaterThanOrEqual(2));
    expect(streams[0]?.aborted).toBe(true);
    supervisor.stop();
  });

  it("drops the current stream on reconnectNow and never delivers its later messages", async () => {
    const { supervisor, streams, received } = supervised();
    supervisor.start();
    const first = streams[0];
    supervisor.reconnectNow();
    expect(streams).toHaveLength(2);
    first?.push({ value: 99 });
    streams[1]?.push({ value: 7 });
    await vi.waitFor(() => expect(received).toEqual([7]));
    expect(first?.aborted).toBe(true);
    supervisor.stop();
  });

  it("stops on a fatal error, or when a message says the work is done", async () => {
    const fatal = supervised({ fatal: (e) => e instanceof Error && e.message === "refused" });
    fatal.supervisor.start();
    fatal.streams[0]?.push({ error: new Error("refused") });
    await vi.waitFor(() => expect(fatal.supervisor.state).toEqual({ kind: "stopped", error: new Error("refused") }));
    expect(fatal.streams).toHaveLength(1);

    const done = supervised({ stopAt: 3 });
    done.supervisor.start();
    done.streams[0]?.push({ value: 3 });
    await vi.waitFor(() => expect(done.supervisor.isRunning).toBe(false));
    expect(done.streams).toHaveLength(1);
  });

  it("waits 250 ms doubling to 10 s, spread by jitter", () => {
    expect(retryDelay(0, () => 0.5)).toBe(250);
    expect(retryDelay(3, () => 0.5)).toBe(2_000);
    expect(retryDelay(20, () => 0.5)).toBe(10_000);
    expect(retryDelay(0, () => 0)).toBe(200);
    expect(retryDelay(0, () => 1)).toBe(300);
  });
});
