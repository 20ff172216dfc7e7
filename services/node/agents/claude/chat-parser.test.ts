import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { chatFixtureCases, plainMessages } from "../../chat/parser-fixtures.js";
import { claudeChatParser } from "./chat-parser.js";

const cases = chatFixtureCases(join(import.meta.dirname, "fixtures/chat"));

describe("Claude Code chat parser", () => {
  it.each(cases.map((c) => [c.name, c] as const))("parses %s", (_name, c) => {
    expect(plainMessages(claudeChatParser.parse(c.lines))).toEqual(c.expected);
  });

  it("covers the screens the chat must handle", () => {
    expect(cases.map((c) => c.name)).toEqual(
      expect.arrayContaining([
        "v2.1-approval",
        "v2.1-empty",
        "v2.1-long-tool-output",
        "v2.1-unicode",
        "v2.1-multiline-interrupted",
      ]),
    );
  });
});
