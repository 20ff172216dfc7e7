import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { KeyedLock, MAX_WAITING_KEYSTROKES } from "./keyed-lock.js";

describe("KeyedLock", () => {
  it("runs a keystroke at once, with no promise, when nothing holds the key", () => {
    const lock = new KeyedLock(1);
    const typed: string[] = [];
    expect(lock.runWhenFree("s", () => typed.push("a"))).toBeUndefined();
    expect(typed).toEqual(["a"]);
  });

  it("queues keystrokes behind a holder in call order, beyond maxQueued, and only on that key", async () => {
    const lock = new KeyedLock(1);
    const typed: string[] = [];
    let release: () => void = () => {};
    const holder = lock.run("s", () => new Promise<void>((resolve) => (release = resolve)));
    const queued = ["a", "b", "c"].map((k) => lock.runWhenFree("s", () => typed.push(k)));
    expect(queued.every((p) => p instanceof Promise)).toBe(true);
    expect(lock.runWhenFree("other", () => typed.push("other"))).toBeUndefined();
    await Promise.resolve();
    expect(typed).toEqual(["other"]);
    release();
    await holder;
    await Promise.all(queued);
    expect(typed).toEqual(["other", "a", "b", "c"]);
    expect(lock.runWhenFree("s", () => typed.push("d"))).toBeUndefined();
  });

  it("lets a chat send queue while keystrokes wait, and bounds the keystrokes waiting", async () => {
    // Two messages at most: the one typing and one waiting.
    const lock = new KeyedLock(2);
    let release: () => void = () => {};
    const holder = lock.run("s", () => new Promise<void>((resolve) => (release = resolve)));
    const keys = Array.from({ length: MAX_WAITING_KEYSTROKES }, () => lock.runWhenFree("s", () => undefined));
    const over = await lock.runWhenFree("s", () => undefined)?.catch((e: unknown) => e);
    expect((over as ConnectError).code).toBe(Code.ResourceExhausted);
    expect((over as ConnectError).rawMessage).toContain(`${MAX_WAITING_KEYSTROKES} keystrokes already wait`);
    // The keystrokes waiting are not messages: a second chat send may still queue.
    const send = lock.run("s", async () => "sent");
    release();
    await holder;
    expect(await send).toBe("sent");
    await Promise.all(keys);
  });

  it("refuses a message past maxQueued with RESOURCE_EXHAUSTED", async () => {
    const lock = new KeyedLock(1);
    let release: () => void = () => {};
    const holder = lock.run("s", () => new Promise<void>((resolve) => (release = resolve)));
    const err = await lock.run("s", async () => undefined).catch((e: unknown) => e);
    expect((err as ConnectError).code).toBe(Code.ResourceExhausted);
    expect(err).toBeInstanceOf(ConnectError);
    release();
    await holder;
  });
});
