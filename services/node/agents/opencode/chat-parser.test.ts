import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { chatFixtureCases, plainMessages } from "../../chat/parser-fixtures.js";
import { opencodeChatParser } from "./chat-parser.js";

const cases = chatFixtureCases(join(import.meta.dirname, "fixtures/chat"));

describe("opencode chat parser", () => {
  it.each(cases.map((c) => [c.name, c] as const))("parses %s", (_name, c) => {
    expect(plainMessages(opencodeChatParser.parse(c.lines))).toEqual(c.expected);
  });

  it("covers the screens the chat must handle", () => {
    expect(cases.map((c) => c.name)).toEqual(
      expect.arrayContaining([
        "v1.18-permission",
        "v1.18-empty",
        "v1.18-long-tool-output",
        "v1.18-unicode-edit",
        "v1.18-conversation",
      ]),
    );
  });
});
