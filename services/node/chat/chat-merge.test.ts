import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ChatRole } from "../../../gen/staragent/v1/session_pb.js";
import { MARKDOWN_ANSWER } from "../../../test/support/markdown-answer.js";
import { claudeChatParser } from "../agents/claude/chat-parser.js";
import { liveTail, sameMessage } from "./chat-merge.js";
import type { ParsedMessage } from "./chat-parser.js";

const user = (text: string): ParsedMessage => ({ role: ChatRole.USER, text });
const said = (text: string): ParsedMessage => ({ role: ChatRole.ASSISTANT, text });
const notice = (text: string): ParsedMessage => ({ role: ChatRole.SYSTEM, text });
const tool = (toolName: string, toolTarget: string, text = ""): ParsedMessage => ({
  role: ChatRole.TOOL,
  toolName,
  toolTarget,
  text,
});

const LONG = Array.from({ length: 30 }, (_, i) => `Line ${i + 1} of a long answer that keeps going.`).join("\n\n");

/** [what, log, screen, the live tail expected]. */
const CASES: ReadonlyArray<readonly [string, ParsedMessage[], ParsedMessage[], ParsedMessage[]]> = [
  ["an empty screen adds nothing", [user("hi"), said("hello")], [], []],
  ["a log with no message yet: the screen is all there is", [], [user("hi"), said("hel")], [user("hi"), said("hel")]],
  ["an answer still streaming after a logged prompt", [user("say hi")], [user("say hi"), said("Hel")], [said("Hel")]],
  [
    "the answer once logged is not repeated",
    [user("say hi"), said("Hello there")],
    [user("say hi"), said("Hello there")],
    [],
  ],
  [
    "markdown drawn by the TUI is the logged text",
    [user("q"), said("Here is a **short** answer.\n\n- first item\n- second `code`")],
    [user("q"), said("Here is a short answer.\n\n• first item\n• second code")],
    [],
  ],
  [
    "the end of a long answer whose start scrolled away",
    [user("third"), said(LONG)],
    [said(LONG.slice(LONG.indexOf("Line 24")))],
    [],
  ],
  [
    "a prompt the log does not hold yet, under the logged turn",
    [user("third"), said(LONG)],
    [said(LONG.slice(LONG.indexOf("Line 28"))), user("fourth prompt")],
    [user("fourth prompt")],
  ],
  [
    "only an unlogged prompt on screen: it and what follows are new",
    [user("first"), said("one")],
    [user("second"), said("tw")],
    [user("second"), said("tw")],
  ],
  [
    "nothing lines up and no new prompt: nothing is added",
    [user("first"), said("one")],
    [said("unrelated banner text")],
    [],
  ],
  [
    "a collapsed tool group stands for the logged calls",
    [user("write it"), tool("Bash", "echo x > f.txt", "(no output)")],
    [user("write it"), tool("", "", "Ran 1 shell command")],
    [],
  ],
  [
    "a tool call the log does not hold yet",
    [user("run both"), tool("shell", "npm test", "ok")],
    [user("run both"), tool("shell", "npm test", "ok"), tool("shell", "npm run lint")],
    [tool("shell", "npm run lint")],
  ],
  [
    "notices worded differently on screen and in the log",
    [user("long task"), said("Compat-long"), notice("Interrupted")],
    [user("long task"), said("Compat-long"), notice("Interrupted · What should Claude do instead?")],
    [],
  ],
  [
    "the same short prompt twice: the screen's is the newest",
    [user("yes"), said("first answer"), user("yes"), said("second answer")],
    [user("yes"), said("second ans")],
    [],
  ],
  [
    "a screen notice the log does not keep, between logged messages, is not added",
    [user("go"), tool("shell", "echo hi", "hi"), said("done")],
    [user("go"), notice("You approved codex to run echo hi this time"), tool("shell", "echo hi", "hi"), said("done")],
    [],
  ],
  ["emoji-only texts compare as written", [user("🎉")], [user("🎉"), said("🎉🎉")], [said("🎉🎉")]],
];

describe("liveTail", () => {
  it.each(CASES.map((c) => [c[0], c] as const))("%s", (_what, [, log, screen, tail]) => {
    expect(liveTail(log, screen).tail).toEqual(tail);
  });
});

describe("liveTail over a real screen", () => {
  it("matches Claude Code's rendering of a fenced block, list and table to the logged answer", () => {
    // The screen compat captured once that answer was done (fence drawn without its ```ts line, the
    // table as a box); the log holds the same turn as Markdown. The answer is the log's, not twice.
    const capture = readFileSync(
      join(import.meta.dirname, "../agents/claude/fixtures/chat/v2.1.332-markdown-answer.screen.txt"),
      "utf8",
    );
    const screen = claudeChatParser.parse(capture.slice(0, -1).split("\n"));
    const log = [user("show me an add helper compat-claude-b"), said(MARKDOWN_ANSWER)];
    expect(screen.at(-1)?.text).toContain("┌───────┬────────┐");
    expect(liveTail(log, screen)).toEqual({ tail: [], matched: 2 });
  });

  it("still adds an answer that starts with a fence the log does not hold yet", () => {
    const log = [user("q")];
    const screen = [user("q"), said("export const x = 1;")];
    expect(liveTail(log, screen).tail).toEqual([said("export const x = 1;")]);
    expect(sameMessage(said("export const x = 1;"), said("```ts\nexport const x = 1;\n```"))).toBe(true);
    expect(sameMessage(said("export const x = 1;"), said("```ts\nexport const y = 2;\n```"))).toBe(false);
  });
});

describe("sameMessage", () => {
  it("never pairs different roles or different calls", () => {
    expect(sameMessage(user("hello"), said("hello"))).toBe(false);
    expect(sameMessage(tool("shell", "npm test"), tool("shell", "npm run lint"))).toBe(false);
    expect(sameMessage(said("A"), said("After the compaction"))).toBe(true);
    expect(sameMessage(said("B"), said("After the compaction"))).toBe(false);
  });
});
