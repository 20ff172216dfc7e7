import { ChatRole, Cli } from "../../../../gen/staragent/v1/session_pb.js";
import type { ChatParser, ParsedMessage } from "../../chat/chat-parser.js";
import { cleanLines, isBlank, isRule, joinText } from "../../chat/screen-lines.js";

/**
 * Copilot CLI's conversation as its TUI draws it (docs/chat.md, 1.0.102):
 *
 *    ❯ the prompt                                   01:11   the time it was sent at the right edge
 *    ● answer text                                          continuation lines indented by 3
 *    $ Shell Create a marker file No Content                a shell tool: its intention, its outcome;
 *      touch approved.txt                                   the command on the line below
 *    ✗ Shell Create another marker Operation aborted by user   a refused or stopped tool
 *    ● Operation cancelled by user                          an interrupt: a system message
 *    /home/me/proj                                          then the input box between two rules,
 *   ──────  ❯  ──────  footer                               or a dialog box (`╭`) over it
 *
 * A scroll bar (`┃`) may fill the right edge; tips (`● Tip: …`) and notices about MCP servers are
 * the TUI's, not the conversation.
 */
export const copilotChatParser: ChatParser = {
  cli: Cli.COPILOT,
  parse(raw) {
    const lines = cleanLines(raw).map((l) => l.replace(SCROLL_BAR, "").trimEnd());
    return parseBlocks(lines.slice(0, bottomStart(lines)));
  },
};

/** The scroll bar at the right edge. */
const SCROLL_BAR = /\s*┃$/;
/** A prompt line, with the time it was sent at its end. */
const USER_MARK = /^ ❯ (.*?)(?:\s{2,}\d{1,2}:\d{2})?$/;
const BULLET_MARK = /^ ● (.*)$/;
/** A tool line: `$` (ran or running), `✗` (refused or stopped), `✓`; the tool's title and outcome. */
const TOOL_MARK = /^ [$✗✓] (\S+)\s*(.*)$/;
/** The TUI's own notices drawn as bullets. */
const NOTICE = /^(?:Tip: |MCP Servers reloaded\b)/;
/** Interrupt notices: system messages. */
const SYSTEM_TEXT = /^Operation cancelled by user$/;
/** How far above the bottom the input box or a dialog may start. */
const BOTTOM_LINES = 40;

/** Where the bottom chrome starts: a dialog's top, else the folder line above the input box's rules. */
function bottomStart(lines: readonly string[]): number {
  const floor = Math.max(0, lines.length - BOTTOM_LINES);
  let rules = 0;
  for (let i = lines.length - 1; i >= floor; i--) {
    const line = lines[i] ?? "";
    if (/^╭/.test(line)) return i;
    if (isRule(line) && ++rules === 2) {
      // The working folder (and branch) line sits right above the box.
      return i > 0 && !isBlank(lines[i - 1] ?? "") && !/^ [❯●$✗✓] /.test(lines[i - 1] ?? "") ? i - 1 : i;
    }
  }
  return lines.length;
}

function parseBlocks(lines: readonly string[]): ParsedMessage[] {
  const messages: ParsedMessage[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] ?? "";
    const user = USER_MARK.exec(line);
    const bullet = BULLET_MARK.exec(line);
    const tool = TOOL_MARK.exec(line);
    if (!user && !bullet && !tool) {
      i++;
      continue;
    }
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && (isBlank(lines[j] ?? "") || /^ {3}/.test(lines[j] ?? ""))) {
      if (!isBlank(lines[j] ?? "") || (j + 1 < lines.length && /^ {3}\S/.test(lines[j + 1] ?? ""))) {
        body.push(lines[j] ?? "");
      }
      j++;
    }
    if (user) {
      messages.push({ role: ChatRole.USER, text: joinText([user[1] ?? "", ...body.map((l) => l.slice(3))]) });
    } else if (bullet) {
      const text = joinText([bullet[1] ?? "", ...body.map((l) => l.slice(3))]);
      if (SYSTEM_TEXT.test(text)) messages.push({ role: ChatRole.SYSTEM, text });
      else if (!NOTICE.test(text)) messages.push({ role: ChatRole.ASSISTANT, text });
    } else if (tool) {
      const target = (body.find((l) => !isBlank(l)) ?? "").trim();
      const name = (tool[1] ?? "").toLowerCase();
      messages.push({
        role: ChatRole.TOOL,
        toolName: name,
        toolTarget: target,
        text: (tool[2] ?? "").trim(),
      });
    }
    i = j;
  }
  return messages;
}
