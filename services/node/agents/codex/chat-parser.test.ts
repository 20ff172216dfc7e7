import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { chatFixtureCases, plainMessages } from "../../chat/parser-fixtures.js";
import { codexChatParser } from "./chat-parser.js";

const cases = chatFixtureCases(join(import.meta.dirname, "fixtures/chat"));

describe("Codex chat parser", () => {
  it.each(cases.map((c) => [c.name, c] as const))("parses %s", (_name, c) => {
    expect(plainMessages(codexChatParser.parse(c.lines))).toEqual(c.expected);
  });

  it("covers the screens the chat must handle", () => {
    expect(cases.map((c) => c.name)).toEqual(
      expect.arrayContaining([
        "v0.171-approval",
        "v0.171-empty",
        "v0.171-long-tool-output",
        "v0.171-unicode-working",
        "v0.171-interrupted",
      ]),
    );
  });
});
