import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it, vi } from "vitest";
import { InputSender, MAX_HELD_INPUT_BYTES, MAX_INPUT_BYTES } from "./input-sender.js";

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (data: Uint8Array) => new TextDecoder().decode(data);

/** A SendInput stand-in whose calls the test answers one by one. */
function fakeServer() {
  const calls: Array<{ id: string; sequence: number; data: string; answer: (error?: unknown) => void }> = [];
  const send = (id: string, sequence: number, data: Uint8Array) =>
    new Promise<void>((resolve, reject) => {
      calls.push({ id, sequence, data: text(data), answer: (error) => (error ? reject(error) : resolve()) });
    });
  return { calls, send };
}

/** Lets the sender's promise callbacks run (the fake server answers synchronously when told). */
const tick = () => new Promise((r) => setTimeout(r, 0));

describe("InputSender", () => {
  it("holds keys until attached, keeps one call in flight and sends keys typed meanwhile together, in order", async () => {
    const server = fakeServer();
    const lost: number[] = [];
    const sender = new InputSender(server.send, { lost: (n) => lost.push(n), refused: () => undefined }, () => true);
    sender.push(bytes("a"));
    await tick();
    expect(server.calls).toEqual([]);
    sender.attached("att-1");
    await tick();
    expect(server.calls.map((c) => [c.sequence, c.data])).toEqual([[1, "a"]]);
    sender.push(bytes("b"));
    sender.push(bytes("c"));
    await tick();
    expect(server.calls).toHaveLength(1);
    server.calls[0]?.answer();
    await tick();
    expect(server.calls.map((c) => [c.id, c.sequence, c.data])).toEqual([
      ["att-1", 1, "a"],
      ["att-1", 2, "bc"],
    ]);
    server.calls[1]?.answer();
    await sender.idle();
    expect(lost).toEqual([]);
  });

  it("retries a failed call with the same sequence, restarts sequences for a new attachment, reports what a dead one lost", async () => {
    const server = fakeServer();
    const lost: number[] = [];
    const sender = new InputSender(
      server.send,
      { lost: (n) => lost.push(n), refused: () => undefined },
      (e) => e instanceof ConnectError && e.code === Code.Unavailable,
    );
    sender.attached("att-1");
    sender.push(bytes("xy"));
    await tick();
    server.calls[0]?.answer(new ConnectError("blip", Code.Unavailable));
    await vi.waitFor(() => expect(server.calls).toHaveLength(2));
    expect(server.calls.map((c) => [c.id, c.sequence, c.data])).toEqual([
      ["att-1", 1, "xy"],
      ["att-1", 1, "xy"],
    ]);
    // The attachment is replaced while the retry is on its way: its bytes are reported, not resent.
    sender.detached();
    sender.attached("att-2");
    sender.push(bytes("z"));
    server.calls[1]?.answer(new ConnectError("gone", Code.NotFound));
    await vi.waitFor(() => expect(lost).toEqual([2]));
    expect(server.calls[2]).toMatchObject({ id: "att-2", sequence: 1, data: "z" });
  });

  it("splits what exceeds one call and refuses input beyond the hold limit while disconnected", async () => {
    const server = fakeServer();
    const refused: number[] = [];
    const sender = new InputSender(server.send, { lost: () => undefined, refused: (n) => refused.push(n) }, () => true);
    sender.push(new Uint8Array(MAX_HELD_INPUT_BYTES));
    sender.push(bytes("!"));
    expect(refused).toEqual([1]);
    sender.attached("att");
    await tick();
    expect(server.calls[0]?.data.length).toBe(MAX_INPUT_BYTES);
    server.calls[0]?.answer();
    await tick();
    expect(server.calls[1]?.sequence).toBe(2);
    expect(sender.pendingBytes).toBe(MAX_HELD_INPUT_BYTES - 2 * MAX_INPUT_BYTES);
    sender.close();
    expect(sender.pendingBytes).toBe(0);
  });
});
