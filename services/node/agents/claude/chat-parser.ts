import { ChatRole, Cli } from "../../../../gen/staragent/v1/session_pb.js";
import type { ChatParser, ParsedMessage } from "../../chat/chat-parser.js";
import { cleanLines, dedent, isBlank, joinText } from "../../chat/screen-lines.js";

/**
 * Claude Code's conversation as it draws it (FORMATS.md "Claude Code", screens of 1.0.x to 2.1.x):
 *
 *   ❯ the prompt                  (older builds: `> `), continuation lines indented by 2
 *     ⎿  Interrupted · …          notices under a prompt (interrupts, API errors)
 *   ⏺ answer text                 (some terminals: `●`), continuation indented by 2
 *   ⏺ Bash(npm test)              a tool call: Name(target), its output under `⎿`
 *     ⎿  output …                 continuation indented by 5
 *   ✻ Worked for 3s               spinner and status lines at column 0: not messages
 *   ──────────── / ❯ … / ────────  the input box, then the footer; approval dialogs replace it
 *
 * It runs on the alternate screen, so the transcript is the visible screen only.
 */
export const claudeChatParser: ChatParser = {
  cli: Cli.CLAUDE,
  parse(raw) {
    const lines = cleanLines(raw);
    return parseBlocks(lines.slice(0, inputAreaStart(lines)));
  },
};

/** A prompt in the history: `❯ text` or `> text` at column 0. */
const USER_MARK = /^(?:❯|>) (.*)$/;
/** An answer or a tool call: `⏺ text` or `● text` at column 0. */
const MESSAGE_MARK = /^[⏺●] ?(.*)$/;
/** The first line of a tool's output (or of a notice under a prompt). */
const RESULT_MARK = /^\s*⎿ ?(.*)$/;
/** A drawn rule at column 0: the edges of the input box and of approval dialogs. */
const CHROME_RULE = /^[─━]{20,}$/;
/** A tool call's head: `Name(target)`, allowing MCP names such as `server - tool (MCP)`. */
const TOOL_CALL = /^([A-Za-z][\w:.-]*(?: [\w:.-]+)*(?: \(MCP\))?)\((.*)\)$/s;
/** Tools Claude Code ships, recognised even before their output (`⎿`) appears (approval pending). */
const KNOWN_TOOLS = new Set([
  "Bash",
  "BashOutput",
  "Edit",
  "Fetch",
  "Glob",
  "Grep",
  "KillShell",
  "LS",
  "MultiEdit",
  "NotebookEdit",
  "Read",
  "Search",
  "Skill",
  "Task",
  "TodoWrite",
  "Update",
  "WebFetch",
  "WebSearch",
  "Write",
]);
/** The "press a key to see more" hint Claude appends to folded output. */
const EXPAND_HINT = /\s*\((?:ctrl|ctrl\+\w)\s*\+?\s*\w+ to (?:expand|see all)\)$/;

/**
 * Where the input area starts: the topmost rule (or box top) below the last message, so the input
 * box, approval dialogs, spinners and the footer are left out. A prompt line right under a rule is
 * the text being typed, not history.
 */
function inputAreaStart(lines: readonly string[]): number {
  let cut = lines.length;
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i] ?? "";
    if (CHROME_RULE.test(line) || line.startsWith("╭")) {
      cut = i;
      continue;
    }
    if (MESSAGE_MARK.test(line) && line.trim().length > 1) break;
    if (USER_MARK.test(line) && !CHROME_RULE.test(lines[i - 1] ?? "")) break;
  }
  return cut;
}

interface Block {
  readonly user: boolean;
  readonly lines: string[];
}

function parseBlocks(lines: readonly string[]): ParsedMessage[] {
  const blocks: Block[] = [];
  let current: Block | undefined;
  for (const line of lines) {
    const user = USER_MARK.exec(line);
    const message = user ? null : MESSAGE_MARK.exec(line);
    if (user || (message && line.trim().length > 1)) {
      current = { user: Boolean(user), lines: [(user ?? message)?.[1] ?? ""] };
      blocks.push(current);
    } else if (current && (isBlank(line) || line.startsWith(" "))) {
      current.lines.push(line);
    } else {
      // Column-0 text that is not a marker: a spinner, a status line, the banner. Not a message.
      current = undefined;
    }
  }
  return blocks.flatMap((b) => (b.user ? userMessages(b.lines) : agentMessage(b.lines)));
}

function userMessages(lines: readonly string[]): ParsedMessage[] {
  const notice = lines.findIndex((l, i) => i > 0 && RESULT_MARK.test(l));
  const prompt = notice < 0 ? lines : lines.slice(0, notice);
  const out: ParsedMessage[] = [
    { role: ChatRole.USER, text: joinText([prompt[0] ?? "", ...dedent(prompt.slice(1), 2)]) },
  ];
  if (notice >= 0) {
    const text = resultText(lines.slice(notice));
    if (text !== "") out.push({ role: ChatRole.SYSTEM, text });
  }
  return out;
}

function agentMessage(lines: readonly string[]): ParsedMessage[] {
  const result = lines.findIndex((l, i) => i > 0 && RESULT_MARK.test(l));
  const headLines = result < 0 ? lines : lines.slice(0, result);
  const head = [headLines[0] ?? "", ...dedent(headLines.slice(1), 2).map((l) => l.trim())].join(" ").trim();
  const call = TOOL_CALL.exec(head);
  const known = call && KNOWN_TOOLS.has(call[1] ?? "");
  if (result >= 0 || known) {
    if (result >= 0 || headLines.slice(1).every(isBlank)) {
      return [
        {
          role: ChatRole.TOOL,
          toolName: call ? (call[1] ?? "") : head,
          toolTarget: call ? (call[2] ?? "").trim() : "",
          text: result < 0 ? "" : resultText(lines.slice(result)),
        },
      ];
    }
  }
  const text = joinText([lines[0] ?? "", ...dedent(lines.slice(1), 2)]);
  return text === "" ? [] : [{ role: ChatRole.ASSISTANT, text }];
}

/** The text under a `⎿` mark: the mark removed, the output's own indentation kept. */
function resultText(lines: readonly string[]): string {
  const first = lines[0] ?? "";
  const column = first.indexOf("⎿");
  const body = RESULT_MARK.exec(first)?.[1] ?? "";
  const width = column + 3;
  const rest = lines.slice(1).map((l) => (l.slice(0, width).trim() === "" ? l.slice(width) : l.trimStart()));
  return joinText([body.replace(/^ /, ""), ...rest].map((l) => l.replace(EXPAND_HINT, "")));
}
