import { describe, expect, it } from "vitest";
import { REPLY_EXCERPT_CHARS, replyExcerpt } from "./reply-excerpt.js";

describe("replyExcerpt", () => {
  it.each([
    ["the last line that says something", "I ran the tests.\n\nAll 12 tests pass.\n\n", "All 12 tests pass."],
    ["a closing fence is structure, not words", "Here:\n```ts\nconst x = 1;\n```", "const x = 1;"],
    ["a table's delimiter row is structure", "| a | b |\n| - | - |", "| a | b |"],
    [
      "list marks, emphasis, code ticks and link targets go",
      "- Run **`npm test`**, see [the docs](https://x.y/z)",
      "Run npm test, see the docs",
    ],
    ["a heading's marks go", "## Summary", "Summary"],
    ["control characters become spaces", "done\u001b[31m red\ttab", "done [31m red tab"],
    ["nothing said: empty", "\n\n```\n```\n", ""],
  ])("%s", (_what, reply, excerpt) => {
    expect(replyExcerpt(reply)).toBe(excerpt);
  });

  it(`cuts a long line to ${REPLY_EXCERPT_CHARS} characters with an ellipsis`, () => {
    const out = replyExcerpt("word ".repeat(100));
    expect(out.length).toBe(REPLY_EXCERPT_CHARS);
    expect(out.endsWith("…")).toBe(true);
  });
});
