import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ChatRole } from "../../gen/staragent/v1/session_pb.js";
import type { ParsedMessage } from "../../services/node/chat/chat-parser.js";

/**
 * One parser fixture: a pane capture (`<case>.screen.txt`, exactly what `capture-pane -p -J` printed)
 * and the messages a person reading that screen would list (`<case>.expected.json`). Kept as files
 * so a new CLI release is one capture and one expectation away (docs/chat.md, "Tests").
 */
export interface ChatFixtureCase {
  readonly name: string;
  readonly lines: string[];
  readonly expected: PlainMessage[];
}

/** A message as fixtures spell it: the role as a word, tool fields only for tools. */
export interface PlainMessage {
  readonly role: string;
  readonly text: string;
  readonly toolName?: string;
  readonly toolTarget?: string;
}

/** Reads every `*.screen.txt` in `dir` with its `*.expected.json`. */
export function chatFixtureCases(dir: string): ChatFixtureCase[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".screen.txt"))
    .sort()
    .map((file) => {
      const name = file.slice(0, -".screen.txt".length);
      const screen = readFileSync(join(dir, file), "utf8");
      const lines = screen.endsWith("\n") ? screen.slice(0, -1).split("\n") : screen.split("\n");
      const expected = JSON.parse(readFileSync(join(dir, `${name}.expected.json`), "utf8")) as PlainMessage[];
      return { name, lines, expected };
    });
}

/** Parsed messages in the fixtures' spelling, so a mismatch reads as a readable diff. */
export function plainMessages(messages: readonly ParsedMessage[]): PlainMessage[] {
  return messages.map((m) => {
    const role = (ChatRole[m.role] ?? "unspecified").toLowerCase();
    return m.role === ChatRole.TOOL
      ? { role, toolName: m.toolName ?? "", toolTarget: m.toolTarget ?? "", text: m.text }
      : { role, text: m.text };
  });
}
