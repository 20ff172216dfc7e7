import { ChatRole, Cli } from "../../../../gen/staragent/v1/session_pb.js";
import type { ChatParser, ParsedMessage } from "../../chat/chat-parser.js";
import { cleanLines, dedent, isBlank, isRule, joinText } from "../../chat/screen-lines.js";

/**
 * Qwen Code's conversation as its TUI draws it (docs/chat.md "What each parser reads", 0.24):
 *
 *     > the prompt                          two spaces, `>`, the text
 *     ◆︎ the reply                           continuation lines indented by 4
 *     ✓ Shell echo hi > m.txt (Write it)    a tool: `✓` done, `-` refused or stopped, `x` failed
 *     ●︎ Request cancelled.                  notices
 *     ⠧ Just a moment… (2s · esc to cancel) the working line; the input box between rules below
 *
 * An approval dialog (`? Shell … ←`) is drawn below the conversation in place of the input box.
 */
export const qwenChatParser: ChatParser = {
  cli: Cli.QWEN,
  parse(raw) {
    const lines = cleanLines(raw).map((l) => l.replace(SCROLL_BAR, ""));
    return parseLines(lines.slice(0, bottomChromeStart(lines)));
  },
};

const USER_MARK = /^ {2}> (.*)$/;
const REPLY_MARK = /^ {2}◆\uFE0E? (.*)$/;
const NOTICE_MARK = /^ {2}●\uFE0E? (.*)$/;
/** Notices that are conversation; the rest (extensions, context files) are the CLI's own chatter. */
const CHAT_NOTICES = /^Request cancelled\.$/;
/** A tool's line: its mark (`✓`, `-`, `x`, or a spinner while it runs), its name, what it acts on. */
const TOOL_MARK = /^ {2}(?:[✓✗x-] |(?:\.{1,3}|[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]) ?)([A-Z]\w*) ?(.*)$/;
/** The scroll bar Qwen Code draws in the last column once the conversation is taller than the pane. */
const SCROLL_BAR = /\s*[█▐▌]$/;
/** A tool's description at the end of its line: `(Write a marker)`. */
const TOOL_DESCRIPTION = /\s+\([^()]*\)$/;
const WORKING = /\(\d+s\b[^)\n]*·\s*esc to cancel\)/;
const DIALOG_HEADER = /^\s*\?\s+\S+\s+.*←\s*$/;
/** How far above the bottom the input box, footer and dialogs may start. */
const BOTTOM_PANE_LINES = 40;

/** Where the bottom chrome starts: an approval dialog, else the working line or the input box's rule. */
function bottomChromeStart(lines: readonly string[]): number {
  const floor = Math.max(0, lines.length - BOTTOM_PANE_LINES);
  for (let i = lines.length - 1; i >= floor; i--) if (DIALOG_HEADER.test(lines[i] ?? "")) return i;
  let rules = 0;
  for (let i = lines.length - 1; i >= floor; i--) {
    const line = lines[i] ?? "";
    if (isRule(line) && ++rules === 2) {
      let start = i;
      while (start > 0 && (WORKING.test(lines[start - 1] ?? "") || isBlank(lines[start - 1] ?? ""))) start--;
      return start;
    }
  }
  return lines.length;
}

interface Block {
  readonly kind: "user" | "reply" | "notice" | "tool";
  readonly lines: string[];
  readonly tool?: { name: string; target: string };
}

function parseLines(lines: readonly string[]): ParsedMessage[] {
  const blocks: Block[] = [];
  let current: Block | undefined;
  for (const line of lines) {
    if (WORKING.test(line)) {
      current = undefined;
      continue;
    }
    const start = blockStart(line);
    if (start) {
      current = start;
      blocks.push(current);
    } else if (current && current.kind !== "tool" && (isBlank(line) || line.startsWith("    "))) {
      current.lines.push(line);
    } else if (current?.kind === "tool" && line.startsWith("    ")) {
      current.lines.push(line);
    } else {
      current = undefined;
    }
  }
  return blocks.flatMap(toMessages);
}

function blockStart(line: string): Block | undefined {
  const user = USER_MARK.exec(line);
  if (user) return { kind: "user", lines: [user[1] ?? ""] };
  const reply = REPLY_MARK.exec(line);
  if (reply) return { kind: "reply", lines: [reply[1] ?? ""] };
  const notice = NOTICE_MARK.exec(line);
  if (notice) return { kind: "notice", lines: [notice[1] ?? ""] };
  const tool = TOOL_MARK.exec(line);
  if (tool) {
    const target = (tool[2] ?? "").replace(TOOL_DESCRIPTION, "").trim();
    return { kind: "tool", lines: [], tool: { name: tool[1] ?? "", target } };
  }
  return undefined;
}

function toMessages(block: Block): ParsedMessage[] {
  switch (block.kind) {
    case "user":
      return [{ role: ChatRole.USER, text: joinText([block.lines[0] ?? "", ...dedent(block.lines.slice(1), 4)]) }];
    case "reply": {
      const text = joinText([block.lines[0] ?? "", ...dedent(block.lines.slice(1), 4)]);
      return text === "" ? [] : [{ role: ChatRole.ASSISTANT, text }];
    }
    case "notice": {
      const text = joinText(block.lines);
      return CHAT_NOTICES.test(text) ? [{ role: ChatRole.SYSTEM, text }] : [];
    }
    case "tool":
      return [
        {
          role: ChatRole.TOOL,
          toolName: block.tool?.name ?? "",
          toolTarget: block.tool?.target ?? "",
          text: joinText(dedent(block.lines, 4)),
        },
      ];
  }
}
