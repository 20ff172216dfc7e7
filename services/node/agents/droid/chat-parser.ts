import { ChatRole, Cli } from "../../../../gen/staragent/v1/session_pb.js";
import type { ChatParser, ParsedMessage } from "../../chat/chat-parser.js";
import { cleanLines, isBlank, joinText } from "../../chat/screen-lines.js";

/**
 * Factory droid's conversation as its TUI draws it (docs/chat.md "What each parser reads", 0.225):
 *
 *        hello there                      a prompt: three spaces (its coloured bar is a blank cell)
 *     ⛬  the reply                        continuation paragraphs indented by 3
 *        Execute touch m.txt              a tool, with `↳ result` or `⎿ Interrupted` under it
 *     ●  Request cancelled by user        notices
 *      ⠘ Thinking...  (Press ESC to stop) the working line; the input box and footer below
 *
 * A prompt and a reply's later paragraph look alike in plain text: a paragraph is a prompt when a
 * reply, notice, tool or the working line follows it, or when nothing came before it.
 */
export const droidChatParser: ChatParser = {
  cli: Cli.DROID,
  parse(raw) {
    const lines = cleanLines(raw);
    const end = bottomChromeStart(lines);
    return parseLines(
      lines,
      end,
      lines.slice(end).some((l) => WORKING.test(l)),
    );
  },
};

const REPLY_MARK = /^⛬ {2}(.*)$/;
const NOTICE_MARK = /^● {2}(.*)$/;
/** Notices that are conversation. */
const CHAT_NOTICES = /^Request cancelled by user$/;
const PARAGRAPH = /^ {3}(\S.*)$/;
/** A tool's line (`   Execute touch m.txt`), known by the result or approval that follows it. */
const TOOL_LINE = /^ {3}([A-Z][A-Za-z]+) (.+)$/;
const TOOL_RESULT = /^ {4}[↳⎿] ?(.*)$/;
const APPROVAL_START = /^ {2}Command to approve\b/;
const WORKING = /^\s*\S\s+\S.*?\.\.\.\s+\((?:Press ESC to stop|Please wait)\)\s*$/;
/** The footer line above the input box: `Auto (Off) · all actions require approval   Model`. */
const MODE_FOOTER = /^ (?:Auto|Spec|Normal)\b.*·/;
/** The line under the banner, after which the conversation starts. */
const BANNER_END = /^\s+Skills \(.*\)\s+MCPs \(/;
/** How far above the bottom the input box, footer and dialogs may start. */
const BOTTOM_PANE_LINES = 40;

/** Where the bottom chrome starts: the approval dialog, else the working line or the mode footer. */
function bottomChromeStart(lines: readonly string[]): number {
  const floor = Math.max(0, lines.length - BOTTOM_PANE_LINES);
  for (let i = lines.length - 1; i >= floor; i--) if (APPROVAL_START.test(lines[i] ?? "")) return i;
  for (let i = lines.length - 1; i >= floor; i--) {
    if (!MODE_FOOTER.test(lines[i] ?? "")) continue;
    let start = i;
    while (start > 0 && (WORKING.test(lines[start - 1] ?? "") || isBlank(lines[start - 1] ?? ""))) start--;
    return start;
  }
  return lines.length;
}

interface Block {
  kind: "user" | "reply" | "notice" | "tool" | "paragraph";
  readonly lines: string[];
  readonly tool?: { name: string; target: string };
}

/** The conversation in `all` above `end`; `working` when the working line is drawn below it. */
function parseLines(all: readonly string[], end: number, working: boolean): ParsedMessage[] {
  const bannerEnd = all.slice(0, end).findLastIndex((l) => BANNER_END.test(l));
  const blocks: Block[] = [];
  let current: Block | undefined;
  for (let i = bannerEnd + 1; i < end; i++) {
    const line = all[i] ?? "";
    if (WORKING.test(line)) {
      current = undefined;
      continue;
    }
    const paragraph = PARAGRAPH.exec(line);
    if (paragraph && current && current.kind !== "tool" && !isBlank(all[i - 1] ?? "")) {
      // A line straight under another is the same paragraph (a list, a wrapped prompt).
      current.lines.push(paragraph[1] ?? "");
      continue;
    }
    const start = blockStart(line, nextLine(all, i));
    if (start) {
      // A paragraph just before a reply, notice, tool or the working line was a prompt.
      if (start.kind !== "paragraph" && current?.kind === "paragraph") current.kind = "user";
      current = start;
      blocks.push(current);
      continue;
    }
    const result = TOOL_RESULT.exec(line);
    if (current?.kind === "tool" && result) {
      current.lines.push(result[1] ?? "");
    } else if (current && current.kind !== "tool" && isBlank(line)) {
      current.lines.push("");
    } else {
      current = undefined;
    }
  }
  if (blocks.at(-1)?.kind === "paragraph" && working) {
    const last = blocks.at(-1);
    if (last) last.kind = "user";
  }
  return merge(blocks).flatMap(toMessages);
}

function nextLine(lines: readonly string[], i: number): string {
  for (let j = i + 1; j < lines.length; j++) if (!isBlank(lines[j] ?? "")) return lines[j] ?? "";
  return "";
}

function blockStart(line: string, next: string): Block | undefined {
  const reply = REPLY_MARK.exec(line);
  if (reply) return { kind: "reply", lines: [reply[1] ?? ""] };
  const notice = NOTICE_MARK.exec(line);
  if (notice) return { kind: "notice", lines: [notice[1] ?? ""] };
  const tool = TOOL_LINE.exec(line);
  if (tool && (TOOL_RESULT.test(next) || APPROVAL_START.test(next))) {
    return { kind: "tool", lines: [], tool: { name: tool[1] ?? "", target: (tool[2] ?? "").trim() } };
  }
  const paragraph = PARAGRAPH.exec(line);
  if (paragraph) return { kind: "paragraph", lines: [paragraph[1] ?? ""] };
  return undefined;
}

/**
 * Paragraphs still unclaimed belong to the reply before them (its later paragraphs); one with nothing
 * before it is a prompt whose turn left no reply on screen.
 */
function merge(blocks: readonly Block[]): Block[] {
  const out: Block[] = [];
  for (const block of blocks) {
    const previous = out.at(-1);
    if (block.kind === "paragraph" && previous?.kind === "reply") {
      previous.lines.push("", ...block.lines);
      continue;
    }
    if (block.kind === "paragraph" && previous?.kind === "paragraph") {
      previous.lines.push("", ...block.lines);
      continue;
    }
    out.push(block.kind === "paragraph" && !previous ? { ...block, kind: "user" } : block);
  }
  return out;
}

function toMessages(block: Block): ParsedMessage[] {
  const text = joinText(block.lines);
  switch (block.kind) {
    case "user":
    case "paragraph":
      return text === "" ? [] : [{ role: block.kind === "user" ? ChatRole.USER : ChatRole.ASSISTANT, text }];
    case "reply":
      return text === "" ? [] : [{ role: ChatRole.ASSISTANT, text }];
    case "notice":
      return CHAT_NOTICES.test(text) ? [{ role: ChatRole.SYSTEM, text }] : [];
    case "tool":
      return [
        {
          role: ChatRole.TOOL,
          toolName: block.tool?.name ?? "",
          toolTarget: block.tool?.target ?? "",
          text,
        },
      ];
  }
}
