import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { expectCode } from "../../../test/support/codes.js";
import { InputSequencer } from "./input-sequencer.js";

function sequencer(gapWaitMs = 1_000, maxPending = 4) {
  const typed: string[] = [];
  const seq = new InputSequencer({
    write: (d) => {
      typed.push(Buffer.from(d).toString());
      return undefined;
    },
    gapWaitMs,
    maxPending,
  });
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
    await expectCode(seq.submit(2, bytes("b")), Code.FailedPrecondition);
    expect(typed).toEqual([]);
    expect(await seq.submit(1, bytes("a"))).toBe(1);
  });

  it("bounds the calls waiting for a gap, and fails them all when closed", async () => {
    const { seq } = sequencer(10_000, 2);
    const waiting = [seq.submit(2, bytes("b")), seq.submit(3, bytes("c"))].map((p) => expectCode(p, Code.NotFound));
    await expectCode(seq.submit(4, bytes("d")), Code.ResourceExhausted);
    seq.close(new ConnectError("ended", Code.NotFound));
    await Promise.all(waiting);
  });
});

describe("InputSequencer with writes that wait (the session's input lock is held)", () => {
  it("acknowledges a call only once its bytes and every earlier call's are typed", async () => {
    const typed: string[] = [];
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    let waiting = true;
    const seq = new InputSequencer({
      write: (d) => {
        const text = Buffer.from(d).toString();
        if (!waiting) {
          typed.push(text);
          return undefined;
        }
        return gate.then(() => {
          typed.push(text);
        });
      },
      gapWaitMs: 1_000,
      maxPending: 4,
    });
    const states: string[] = [];
    const first = seq.submit(1, bytes("a")).then((n) => states.push(`a${n}`));
    const third = seq.submit(3, bytes("c")).then((n) => states.push(`c${n}`));
    const second = seq.submit(2, bytes("b")).then((n) => states.push(`b${n}`));
    await new Promise((resolve) => setImmediate(resolve));
    expect([typed, states]).toEqual([[], []]);
    waiting = false;
    release();
    await Promise.all([first, second, third]);
    expect(typed).toEqual(["a", "b", "c"]);
    expect(states.sort()).toEqual(["a1", "b3", "c3"]);
  });
});
