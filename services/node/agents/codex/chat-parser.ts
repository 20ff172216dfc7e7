import { ChatRole, Cli } from "../../../../gen/staragent/v1/session_pb.js";
import type { ChatParser, ParsedMessage } from "../../chat/chat-parser.js";
import { cleanLines, dedent, isBlank, joinText } from "../../chat/screen-lines.js";

/**
 * Codex's conversation as its TUI draws it (docs/chat.md "What each parser reads" and docs/compat.md, 0.4x to 0.17x;
 * older builds print into the scrollback, 0.171 redraws it on the alternate screen):
 *
 *   › the prompt                      continuation lines indented by 2
 *   • answer text                     continuation indented by 2
 *   • Ran npm test                    a tool: a verb, its target, output under `└` (indented by 4)
 *     └ output …
 *   ■ Conversation interrupted …      errors; `⚠ …` warnings; `✔ You approved …` notices
 *   ◦ Working (2s • esc to interrupt) status, `Worked for 3s • 20:55` turn ends: not messages
 *   › Ask Codex to do anything        the composer and its footer at the bottom
 *
 * Approval dialogs (`Would you like to run the following command?`) replace the composer.
 */
export const codexChatParser: ChatParser = {
  cli: Cli.CODEX,
  parse(raw) {
    const lines = cleanLines(raw);
    return parseBlocks(lines.slice(0, bottomChromeStart(lines)));
  },
};

const USER_MARK = /^› ?(.*)$/;
const BULLET_MARK = /^[•◦] (.*)$/;
const ERROR_MARK = /^■ (.*)$/;
const WARNING_MARK = /^⚠ ?(.*)$/;
/** Notices such as `✔ You approved codex to run … this time`. */
const NOTICE_MARK = /^✔ (.*)$/;
/** The turn-end line, drawn under the last answer (0.17x) or as a rule (`─ Worked for 3s ───`). */
const WORKED_FOR = /^\s*(?:─ )?Worked for (?:\d+h )?(?:\d+m )?<?\d+s\b/;
/** A tip Codex draws under an answer (`└ Tip: Press f3 to search this conversation.`): not the answer. */
const TIP = /^\s*└ Tip: /;
/** The cell a compaction leaves (0.171: `• Context compacted · 0s`): a notice, not an answer. */
const COMPACTED = /^Context compacted\b/;
/** The status line shown while a turn waits for its first token. */
const WORKING = /^[•◦] Working(?: \(|$)/;
/** Lines only the approval and question dialogs draw; the dialog starts at the first of them. */
const DIALOG_TITLE =
  /^\s*(?:Would you like to (?:run the following command|make the following edits|grant these permissions)\?|Do you trust the contents of this directory\?|Trust this folder\?)/;
/** How far above the bottom a dialog or the composer may start (they are drawn in the bottom pane). */
const BOTTOM_PANE_LINES = 40;
/** Tool cells: the verb Codex prints, with the tool name reported for it. */
const TOOL_VERBS: ReadonlyArray<readonly [RegExp, string]> = [
  [/^(?:Ran|Running)\s+(.*)$/s, "shell"],
  [/^(?:Explored|Exploring)\s*(.*)$/s, "explore"],
  [/^(?:Edited|Editing|Added|Deleted|Applied patch(?: to)?)\s+(.*?)(?:\s+\(\+\d+ -\d+\))?$/s, "apply_patch"],
  [/^(?:Called|Calling)\s+(.*)$/s, "mcp"],
  [/^Updated Plan\s*(.*)$/s, "update_plan"],
  [/^(?:Searched|Searching) the web\s*(.*)$/s, "web_search"],
];

/** The bottom pane: an approval or trust dialog, else the composer (the last `›` line at column 0). */
function bottomChromeStart(lines: readonly string[]): number {
  const floor = Math.max(0, lines.length - BOTTOM_PANE_LINES);
  for (let i = lines.length - 1; i >= floor; i--) {
    if (DIALOG_TITLE.test(lines[i] ?? "")) return i;
  }
  for (let i = lines.length - 1; i >= floor; i--) {
    const line = lines[i] ?? "";
    if (BULLET_MARK.test(line) && !WORKING.test(line)) break;
    if (USER_MARK.test(line)) return i;
  }
  return lines.length;
}

interface Block {
  readonly kind: "user" | "bullet" | "error" | "warning";
  readonly lines: string[];
}

function parseBlocks(lines: readonly string[]): ParsedMessage[] {
  const blocks: Block[] = [];
  let current: Block | undefined;
  for (const line of lines) {
    const start = blockStart(line);
    if (start) {
      current = start;
      blocks.push(current);
    } else if (WORKED_FOR.test(line)) {
      current = undefined;
    } else if (TIP.test(line)) {
      // Not part of the cell above it (it ends the cell).
      current = undefined;
    } else if (current && (isBlank(line) || line.startsWith(" "))) {
      current.lines.push(line);
    } else {
      // Column-0 text that starts no cell: status lines, rules, the banner box.
      current = undefined;
    }
  }
  return blocks.filter((_block, i) => !superseded(blocks, i)).flatMap(toMessages);
}

/**
 * True for a `Running X` cell that a later `Ran X` cell of the same turn reports again: Codex leaves
 * the first in the history while it waits (for approval), and both describe one tool call.
 */
function superseded(blocks: readonly Block[], index: number): boolean {
  const running = /^Running (.*)$/s.exec(blocks[index]?.lines[0] ?? "");
  if (!running || blocks[index]?.kind !== "bullet") return false;
  for (const later of blocks.slice(index + 1)) {
    if (later.kind === "user") return false;
    if (later.kind === "bullet" && later.lines[0] === `Ran ${running[1]}`) return true;
  }
  return false;
}

function blockStart(line: string): Block | undefined {
  if (WORKING.test(line)) return undefined;
  const user = USER_MARK.exec(line);
  if (user) return { kind: "user", lines: [user[1] ?? ""] };
  const bullet = BULLET_MARK.exec(line);
  if (bullet) return { kind: "bullet", lines: [bullet[1] ?? ""] };
  const error = ERROR_MARK.exec(line);
  if (error) return { kind: "error", lines: [error[1] ?? ""] };
  const warning = WARNING_MARK.exec(line) ?? NOTICE_MARK.exec(line);
  if (warning) return { kind: "warning", lines: [warning[1] ?? ""] };
  return undefined;
}

function toMessages(block: Block): ParsedMessage[] {
  const text = () => joinText([block.lines[0] ?? "", ...dedent(block.lines.slice(1), 2)]);
  switch (block.kind) {
    case "user":
      return [{ role: ChatRole.USER, text: text() }];
    case "error":
    case "warning":
      return [{ role: ChatRole.SYSTEM, text: text() }];
    case "bullet":
      if (COMPACTED.test(block.lines[0] ?? "")) return [{ role: ChatRole.SYSTEM, text: "Context compacted" }];
      return [toolMessage(block.lines) ?? { role: ChatRole.ASSISTANT, text: text() }].filter(
        (m) => m.text !== "" || m.role === ChatRole.TOOL,
      );
  }
}

function toolMessage(lines: readonly string[]): ParsedMessage | undefined {
  const head = lines[0] ?? "";
  for (const [pattern, toolName] of TOOL_VERBS) {
    const match = pattern.exec(head);
    if (!match) continue;
    const body = dedent(lines.slice(1), 2).map((l) => l.replace(/^└ ?/, "  "));
    const output = joinText(body);
    const target = (match[1] ?? "").trim();
    // `Explored` names its targets on the lines below (`└ Read main.ts`).
    const firstItem = output.split("\n")[0] ?? "";
    return {
      role: ChatRole.TOOL,
      toolName,
      toolTarget: target !== "" ? target : firstItem.trim(),
      text: output,
    };
  }
  return undefined;
}
