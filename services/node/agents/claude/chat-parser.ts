import { ChatRole, Cli } from "../../../../gen/staragent/v1/session_pb.js";
import type { ChatParser, ParsedMessage } from "../../chat/chat-parser.js";
import { cleanLines, dedent, isBlank, joinText } from "../../chat/screen-lines.js";

/**
 * Claude Code's conversation as it draws it (docs/chat.md "What each parser reads", screens of 1.0.x to 2.1.x):
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
/**
 * A collapsed tool group under a prompt (2.1.x): `  Ran 1 shell command`, `  Did not run 1 call`,
 * `  Read 2 files`; the commands follow as `  ⎿  $ …` lines.
 */
const TOOL_SUMMARY =
  /^ {2}(?:Ran|Did not run|Read|Reading|Wrote|Edited|Updated|Searched|Fetched|Listed|Found|Called|Created) \d+ \S/;
/** A tool's command under its group or description: `  ⎿  $ echo …`. */
const COMMAND_RESULT = /^\s*⎿\s+\$ /;
/** A notice Claude draws under an interrupted message. */
const INTERRUPT_NOTICE = /^Interrupted\b/;
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
  // The prompt ends at a notice (`⎿`), a collapsed tool group, or a running tool's description (a
  // line whose next one is its `⎿  $ command`).
  const end = lines.findIndex(
    (l, i) =>
      i > 0 &&
      (RESULT_MARK.test(l) ||
        TOOL_SUMMARY.test(l) ||
        (l.startsWith("  ") && !isBlank(l) && COMMAND_RESULT.test(lines[i + 1] ?? ""))),
  );
  const prompt = end < 0 ? lines : lines.slice(0, end);
  const out: ParsedMessage[] = [
    { role: ChatRole.USER, text: joinText([prompt[0] ?? "", ...dedent(prompt.slice(1), 2)]) },
  ];
  if (end < 0) return out;
  const rest = lines.slice(end);
  if (RESULT_MARK.test(rest[0] ?? "")) {
    // Notices only (an interrupt, an API error): one system message, as older builds draw them.
    const text = resultText(rest);
    if (text !== "") out.push({ role: ChatRole.SYSTEM, text });
    return out;
  }
  let i = 0;
  while (i < rest.length) {
    const line = rest[i] ?? "";
    if (isBlank(line)) {
      i++;
      continue;
    }
    if (RESULT_MARK.test(line)) {
      let j = i + 1;
      while (j < rest.length && !RESULT_MARK.test(rest[j] ?? "") && !TOOL_SUMMARY.test(rest[j] ?? "")) j++;
      const text = resultText(rest.slice(i, j));
      if (text !== "") out.push({ role: ChatRole.SYSTEM, text });
      i = j;
      continue;
    }
    // A tool group (or a running tool's description) and the commands drawn under it.
    const commands: string[] = [];
    let j = i + 1;
    while (j < rest.length && COMMAND_RESULT.test(rest[j] ?? "")) {
      commands.push(RESULT_MARK.exec(rest[j] ?? "")?.[1]?.trim() ?? "");
      j++;
    }
    out.push({ role: ChatRole.TOOL, toolName: "", toolTarget: "", text: [line.trim(), ...commands].join("\n") });
    i = j;
  }
  return out;
}

function agentMessage(lines: readonly string[]): ParsedMessage[] {
  const result = lines.findIndex((l, i) => i > 0 && RESULT_MARK.test(l));
  const headLines = result < 0 ? lines : lines.slice(0, result);
  const head = [headLines[0] ?? "", ...dedent(headLines.slice(1), 2).map((l) => l.trim())].join(" ").trim();
  const call = TOOL_CALL.exec(head);
  const known = call && KNOWN_TOOLS.has(call[1] ?? "");
  const notice = result >= 0 ? resultText(lines.slice(result)) : "";
  if (!call && INTERRUPT_NOTICE.test(notice)) {
    // An answer cut off by Esc: its text so far, then the notice.
    const text = joinText([lines[0] ?? "", ...dedent(lines.slice(1, result), 2)]);
    return [...(text === "" ? [] : [{ role: ChatRole.ASSISTANT, text }]), { role: ChatRole.SYSTEM, text: notice }];
  }
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
