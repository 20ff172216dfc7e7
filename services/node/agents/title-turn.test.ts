import { describe, expect, it } from "vitest";
import { logTurn } from "./title-turn.js";

describe("logTurn", () => {
  const state = { turn: "active" as const, lastUserTurn: "u7", prompt: "fix the build", extra: 1 };

  it("takes the log's turn, its prompt and the tool it waits on, with the log's write time", () => {
    expect(logTurn({ mtimeMs: 42, reread: true }, state, true)).toEqual({
      turn: "active",
      lastUserTurn: "u7",
      prompt: "fix the build",
      toolPending: true,
      mtimeMs: 42,
      reread: true,
    });
  });

  it("is undefined without a fresh log or without its state for this run", () => {
    expect(logTurn(undefined, state, false)).toBeUndefined();
    expect(logTurn({ mtimeMs: 42, reread: false }, undefined, false)).toBeUndefined();
  });
});
