import { ChatRole, Cli } from "../../../../gen/staragent/v1/session_pb.js";
import type { ChatParser, ParsedMessage } from "../../chat/chat-parser.js";
import { cleanLines, dedent, isBlank, isBlockArt, isRule, joinText } from "../../chat/screen-lines.js";
import { unboxed } from "./prompt-reader.js";

/**
 * Gemini CLI's conversation as its TUI draws it (docs/chat.md "What each parser reads", 0.61):
 *
 *    > the prompt                      a space, `>`, the text; continuation lines indented by 3
 *   ✦ the reply                        continuation lines indented by 2
 *   ╭──────────────────────────╮       a tool: `✓` done, `-` refused or stopped, `⊷` running,
 *   │ ✓  Shell echo hi > m.txt │       `?` waiting for approval (the dialog), its output below
 *   ╰──────────────────────────╯
 *   ℹ Request cancelled.               notices
 *    ⠹ Thinking... (esc to cancel, 1s) the working line; the input box and footer below a rule
 */
export const geminiChatParser: ChatParser = {
  cli: Cli.GEMINI,
  parse(raw) {
    const lines = cleanLines(raw);
    return parseLines(lines.slice(0, bottomChromeStart(lines)));
  },
};

const USER_MARK = /^ > (.*)$/;
const REPLY_MARK = /^✦ (.*)$/;
const NOTICE_MARK = /^ℹ (.*)$/;
/** A tool's status line in its box: the mark, the tool's name, what it acted on. */
const TOOL_LINE = /^([✓\-⊷x✗o])\s+(\S+)\s*(.*)$/;
/** The line of a running turn. */
const WORKING = /\(esc to cancel, \d/;
/** The approval dialog's status mark: the dialog starts at the box holding it. */
const DIALOG_TOOL = /^\s*│ \? \S/;
/** The footer line above the input box's rule. */
const SHORTCUTS = /^\s+\? for shortcuts$/;
/** How far above the bottom the input box, footer and dialogs may start. */
const BOTTOM_PANE_LINES = 40;

/** Where the bottom chrome starts: an approval dialog's box, else the rule above the input box. */
function bottomChromeStart(lines: readonly string[]): number {
  const floor = Math.max(0, lines.length - BOTTOM_PANE_LINES);
  for (let i = lines.length - 1; i >= floor; i--) {
    if (!DIALOG_TOOL.test(lines[i] ?? "")) continue;
    for (let j = i; j >= floor; j--) if (/^\s*╭/.test(lines[j] ?? "")) return j;
    return i;
  }
  for (let i = lines.length - 1; i >= floor; i--) {
    const line = lines[i] ?? "";
    if (isRule(line)) {
      let start = i;
      while (start > 0 && (SHORTCUTS.test(lines[start - 1] ?? "") || WORKING.test(lines[start - 1] ?? ""))) start--;
      return start;
    }
  }
  return lines.length;
}

interface Block {
  readonly kind: "user" | "reply" | "notice" | "tool";
  readonly lines: string[];
}

function parseLines(lines: readonly string[]): ParsedMessage[] {
  const blocks: Block[] = [];
  let current: Block | undefined;
  let box: string[] | undefined;
  for (const line of lines) {
    if (box) {
      box.push(line);
      if (/^\s*╰/.test(line)) {
        const tool = toolBlock(box);
        if (tool) blocks.push(tool);
        box = undefined;
      }
      continue;
    }
    if (/^\s*╭/.test(line)) {
      box = [line];
      current = undefined;
      continue;
    }
    if (WORKING.test(line) || isBlockArt(line)) {
      current = undefined;
      continue;
    }
    const start = blockStart(line);
    if (start) {
      current = start;
      blocks.push(current);
    } else if (current && (isBlank(line) || line.startsWith("  "))) {
      current.lines.push(line);
    } else {
      // Column-0 text that starts no block: the banner, tips, warnings.
      current = undefined;
    }
  }
  return blocks.map(toMessage).filter((m) => m.text !== "" || m.role === ChatRole.TOOL);
}

function blockStart(line: string): Block | undefined {
  const user = USER_MARK.exec(line);
  if (user) return { kind: "user", lines: [user[1] ?? ""] };
  const reply = REPLY_MARK.exec(line);
  if (reply) return { kind: "reply", lines: [reply[1] ?? ""] };
  const notice = NOTICE_MARK.exec(line);
  if (notice) return { kind: "notice", lines: [notice[1] ?? ""] };
  return undefined;
}

/** A tool's box: its status line, then its output. */
function toolBlock(box: readonly string[]): Block | undefined {
  const inner = unboxed(box).filter((l) => !/^[╭╰][─╮╯]*$/.test(l));
  const head = TOOL_LINE.exec(inner[0] ?? "");
  if (!head) return undefined;
  return { kind: "tool", lines: [`${head[2] ?? ""}\u0000${(head[3] ?? "").trim()}`, ...inner.slice(1)] };
}

function toMessage(block: Block): ParsedMessage {
  switch (block.kind) {
    case "user":
      return { role: ChatRole.USER, text: joinText([block.lines[0] ?? "", ...dedent(block.lines.slice(1), 3)]) };
    case "reply":
      return { role: ChatRole.ASSISTANT, text: joinText([block.lines[0] ?? "", ...dedent(block.lines.slice(1), 2)]) };
    case "notice":
      return { role: ChatRole.SYSTEM, text: joinText(block.lines) };
    case "tool": {
      const [name, target] = (block.lines[0] ?? "").split("\u0000");
      return {
        role: ChatRole.TOOL,
        toolName: name ?? "",
        toolTarget: target ?? "",
        text: joinText(block.lines.slice(1)),
      };
    }
  }
}
