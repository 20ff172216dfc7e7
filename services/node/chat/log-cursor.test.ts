import { describe, expect, it } from "vitest";
import { encodeCursor } from "./chat-cursor.js";
import {
  type ChatEntry,
  decodeLogCursor,
  decodePageToken,
  encodeLogCursor,
  encodePageToken,
  logDelta,
  logGeneration,
  oldestEntry,
} from "./log-cursor.js";
import { MessageIds } from "./message-ids.js";

const logged = (id: number, digest = `d${id}`): ChatEntry => ({ id, digest, logged: true });
const screen = (id: number, digest = `s${id}`): ChatEntry => ({ id, digest, logged: false });
const G = logGeneration("/log.jsonl:123");
const copyOf = (chat: ChatEntry[]) => {
  const copy = decodeLogCursor(encodeLogCursor(G, chat));
  if (!copy) throw new Error("a log cursor must decode");
  return copy;
};
const ids = (entries: readonly ChatEntry[] | undefined) => entries?.map((e) => e.id);

describe("logDelta", () => {
  const chat = [logged(1024), logged(5120), logged(9216), logged(13312), logged(20480)];

  it("returns nothing for an unchanged chat and only the new messages after it grew", () => {
    expect(logDelta(chat, copyOf(chat))).toEqual([]);
    expect(ids(logDelta([...chat, logged(30720)], copyOf(chat)))).toEqual([30720]);
  });

  it("returns from a message that changed (a tool's result arrived, an answer grew)", () => {
    const grown = [...chat.slice(0, 4), logged(20480, "other")];
    expect(ids(logDelta(grown, copyOf(chat)))).toEqual([20480]);
  });

  it("returns from the last kept message when the screen's provisional tail went away", () => {
    const before = [...chat, screen(20481), screen(20482)];
    const after = [...chat, logged(24576), logged(26624)];
    expect(ids(logDelta(after, copyOf(before)))).toEqual([20480, 24576, 26624]);
  });

  it("keeps its newest logged message as an anchor when the screen tail fills the remembered end", () => {
    const before = [...chat, screen(20481), screen(20482), screen(20483), screen(20484)];
    const copy = copyOf(before);
    expect(oldestEntry(copy)).toBe(20480);
    expect(ids(logDelta([...chat, logged(40960)], copy))).toEqual([20480, 40960]);
  });

  it("cannot bring up to date a copy whose oldest remembered message is gone", () => {
    expect(logDelta([logged(90000)], copyOf(chat))).toBeUndefined();
  });
});

describe("cursors and page tokens", () => {
  it("a screen chat's cursor given to a log-backed chat is a reset, not an error", () => {
    const screenCursor = encodeCursor(new MessageIds().number("s", []), 2000);
    expect(decodeLogCursor(screenCursor)).toBeUndefined();
  });

  it("rejects what GetChat did not make with INVALID_ARGUMENT naming the field", () => {
    for (const bad of ["not a cursor!", Buffer.from('{"v":2}').toString("base64url"), "x".repeat(5000)]) {
      expect(() => decodeLogCursor(bad)).toThrow(/^\[invalid_argument\] cursor: not a cursor returned by GetChat/);
      expect(() => decodePageToken(bad)).toThrow(/^\[invalid_argument\] before: not a page token returned by GetChat/);
    }
    expect(() => decodePageToken(Buffer.from('{"v":2,"g":"x","b":-5}').toString("base64url"))).toThrow(/before/);
  });

  it("page tokens carry the log's generation and where older messages end", () => {
    expect(decodePageToken(encodePageToken(G, 4096))).toEqual({ generation: G, before: 4096 });
    expect(decodePageToken(encodePageToken(G, null))).toEqual({ generation: G, before: undefined });
    expect(logGeneration("/other.jsonl:123")).not.toBe(G);
  });
});
