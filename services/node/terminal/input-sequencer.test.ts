import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { InputSequencer } from "./input-sequencer.js";

function sequencer(gapWaitMs = 1_000, maxPending = 4) {
  const typed: string[] = [];
  const seq = new InputSequencer({ write: (d) => typed.push(Buffer.from(d).toString()), gapWaitMs, maxPending });
  return { seq, typed };
}

const bytes = (s: string) => Buffer.from(s);

describe("InputSequencer", () => {
  it("types out-of-order calls in sequence order and a repeated call only once", async () => {
    const { seq, typed } = sequencer();
    const third = seq.submit(3, bytes("c"));
    const second = seq.submit(2, bytes("b"));
    expect(typed).toEqual([]);
    expect(await seq.submit(1, bytes("a"))).toBe(3);
    expect(await Promise.all([second, third])).toEqual([3, 3]);
    expect(await seq.submit(2, bytes("b"))).toBe(3);
    expect(typed).toEqual(["a", "b", "c"]);
  });

  it("fails a call whose gap is never filled, typing nothing out of order", async () => {
    const { seq, typed } = sequencer(30);
    const err = await seq.submit(2, bytes("b")).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.FailedPrecondition);
    expect(typed).toEqual([]);
    expect(await seq.submit(1, bytes("a"))).toBe(1);
  });

  it("bounds the calls waiting for a gap, and fails them all when closed", async () => {
    const { seq } = sequencer(10_000, 2);
    const waiting = [seq.submit(2, bytes("b")), seq.submit(3, bytes("c"))].map((p) => p.catch((e: unknown) => e));
    const over = await seq.submit(4, bytes("d")).catch((e: unknown) => e);
    expect((over as ConnectError).code).toBe(Code.ResourceExhausted);
    seq.close(new ConnectError("ended", Code.NotFound));
    for (const e of await Promise.all(waiting)) expect((e as ConnectError).code).toBe(Code.NotFound);
  });
});
