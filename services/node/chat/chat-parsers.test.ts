import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { chatFixtureCases, plainMessages } from "../../../test/support/parser-fixtures.js";
import { createBuiltInAgents } from "../agents/registry.js";

const AGENTS = join(import.meta.dirname, "../agents");

/**
 * Every module's chat parser against its own fixtures (`agents/<name>/fixtures/chat/`): each capture
 * parses to the messages a person would list, and the captures named in `required.json` (the screens
 * that CLI's chat must handle) are there.
 */
describe.each(createBuiltInAgents().modules.map((m) => [m.name, m] as const))("%s chat parser", (name, module) => {
  const dir = join(AGENTS, name, "fixtures", "chat");
  const cases = chatFixtureCases(dir);

  it.each(cases.map((c) => [c.name, c] as const))("parses %s", (_name, c) => {
    expect(plainMessages(module.chatParser.parse(c.lines))).toEqual(c.expected);
  });

  it("covers the screens the chat must handle", () => {
    const required = JSON.parse(readFileSync(join(dir, "required.json"), "utf8")) as string[];
    expect(required.length).toBeGreaterThan(0);
    expect(cases.map((c) => c.name)).toEqual(expect.arrayContaining(required));
  });
});
