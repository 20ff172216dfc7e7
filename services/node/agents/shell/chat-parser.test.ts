import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { chatFixtureCases, plainMessages } from "../../chat/parser-fixtures.js";
import { shellChatParser } from "./chat-parser.js";

const cases = chatFixtureCases(join(import.meta.dirname, "fixtures/chat"));

describe("shell chat parser", () => {
  it.each(cases.map((c) => [c.name, c] as const))("parses %s", (_name, c) => {
    expect(plainMessages(shellChatParser.parse(c.lines))).toEqual(c.expected);
  });

  it("covers the screens the chat must handle", () => {
    expect(cases.map((c) => c.name)).toEqual(
      expect.arrayContaining(["bash-conversation", "empty", "running-multiline", "zsh-unicode-long-output"]),
    );
  });
});
