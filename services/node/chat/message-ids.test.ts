import { describe, expect, it } from "vitest";
import { ChatRole } from "../../../gen/staragent/v1/session_pb.js";
import { chatDelta, encodeCursor } from "./chat-cursor.js";
import type { ParsedMessage } from "./chat-parser.js";
import { alignOffset, MessageIds } from "./message-ids.js";

const say = (text: string): ParsedMessage => ({ role: ChatRole.ASSISTANT, text });
const ids = (chat: { messages: readonly { id: number }[] }) => chat.messages.map((m) => m.id);
const texts = (messages: readonly { message: ParsedMessage }[]) => messages.map((m) => m.message.text);

describe("alignOffset", () => {
  it("lines up reads that only grew", () => {
    expect(alignOffset(["a", "b"], ["a", "b", "c"])).toBe(0);
    expect(alignOffset(["a", "b"], ["a", "b2"])).toBe(0);
  });

  it("finds how many messages scrolled off the top, even when the new top is cut", () => {
    expect(alignOffset(["a", "b", "c", "d"], ["c", "d", "e"])).toBe(2);
    expect(alignOffset(["a", "b", "c", "d"], ["c-cut", "d", "e"])).toBe(2);
  });

  it("does not line up unrelated reads", () => {
    expect(alignOffset(["a", "b", "c"], ["x", "y"])).toBeUndefined();
    expect(alignOffset(["a", "b", "c"], ["x"])).toBeUndefined();
  });
});

describe("MessageIds", () => {
  it("keeps ids while older messages scroll off and never reuses them for other messages", () => {
    const numbering = new MessageIds();
    const first = numbering.number("s", [say("a"), say("b"), say("c")]);
    expect(ids(first)).toEqual([0, 1, 2]);
    const scrolled = numbering.number("s", [say("b"), say("c"), say("d")]);
    expect(ids(scrolled)).toEqual([1, 2, 3]);
    const cleared = numbering.number("s", [say("x")]);
    expect(ids(cleared)).toEqual([4]);
    expect(numbering.number("other", [say("a")]).messages[0]?.id).toBe(0);
  });
});

describe("chatDelta", () => {
  it("returns only new messages, and the last one again when it grew", () => {
    const numbering = new MessageIds();
    const before = numbering.number("s", [say("q"), say("answer")]);
    const cursor = encodeCursor(before, 2000);
    const same = chatDelta(numbering.number("s", [say("q"), say("answer")]), 2000, cursor);
    expect(same).toEqual({ messages: [], reset: false });
    const grown = chatDelta(numbering.number("s", [say("q"), say("answer, longer"), say("next")]), 2000, cursor);
    expect(grown.reset).toBe(false);
    expect(texts(grown.messages)).toEqual(["answer, longer", "next"]);
    expect(ids(grown)).toEqual([1, 2]);
  });

  it("resets when the client's messages are gone or the history size differs", () => {
    const numbering = new MessageIds();
    const cursor = encodeCursor(numbering.number("s", [say("a"), say("b"), say("c")]), 2000);
    expect(chatDelta(numbering.number("s", [say("a"), say("b"), say("c")]), 500, cursor).reset).toBe(true);
    const cleared = chatDelta(numbering.number("s", [say("x")]), 2000, cursor);
    expect(cleared.reset).toBe(true);
    expect(texts(cleared.messages)).toEqual(["x"]);
  });

  it("rejects what is not a cursor with INVALID_ARGUMENT naming the field", () => {
    const chat = new MessageIds().number("s", [say("a")]);
    for (const bad of ["not a cursor!", Buffer.from("{}").toString("base64url"), "x".repeat(5000)]) {
      expect(() => chatDelta(chat, 2000, bad)).toThrow(/cursor: not a cursor returned by GetChat/);
    }
  });
});
