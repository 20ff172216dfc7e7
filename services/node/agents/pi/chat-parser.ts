import { ChatRole, Cli } from "../../../../gen/staragent/v1/session_pb.js";
import type { ChatParser, ParsedMessage } from "../../chat/chat-parser.js";
import { cleanLines, isBlank, isRule, joinText } from "../../chat/screen-lines.js";

/**
 * pi's conversation as its TUI draws it (docs/chat.md, "pi", 0.73). pi draws inline (no alternate
 * screen), each part after a blank line, a prompt and a tool in a padded box whose colour is not in
 * the text:
 *
 *    pi v0.73.1 … [Extensions] …          the start-up header
 *                                         two or more blank lines between parts
 *    hello there                          a prompt: the first text of a turn
 *    Hello from the model.                the answer (paragraphs one blank line apart)
 *    $ echo hi > a.txt                    a shell tool: its command, its output, `Took 0.1s`
 *    Operation aborted                    an interrupt: a system message
 *    ⠧ Working...                         the working line
 *   ────────── input box ──────────       then the input box (or a dialog) between two rules,
 *   /home/me/proj                         the folder and the footer
 *
 * A prompt's box adds a blank line of padding above and below it, which tells it from an answer
 * (solvePads); where the screen leaves that open, a text part starting a turn (first, or after an
 * answer or an interrupt) is the prompt.
 */
export const piChatParser: ChatParser = {
  cli: Cli.PI,
  parse(raw) {
    const lines = cleanLines(raw).map((l) => l.trimEnd());
    const end = bottomStart(lines);
    const start = headerEnd(lines, end);
    return parseParts(lines.slice(start, end), start > 0);
  },
};

/** The start-up header's first line. */
const HEADER_TITLE = /^ pi v\d+\.\d+/;
/** Lines of the start-up header: notices, key hints, the resources it loaded (`[Extensions]`, items). */
const HEADER_LINE =
  /^(?:.* not found\. Offline mode enabled, skipping download\.| escape interrupt · .*| Press ctrl\+o .*| Pi can explain .*|\[[A-Z][\w ]*\]| {2}\S.*)$/;
/** The working line and its spinner. */
const WORKING = /^\s*[⠀-⣿]\s+Working\.\.\.\s*$/;
/** A shell tool's box: `$ command`. */
const SHELL_MARK = /^ \$ (.*)$/;
/** The time line at the end of a tool's box. */
const TOOL_TIME = /^ (?:Took|Elapsed) \d+(?:\.\d+)?s$/;
/** Interrupt notices: system messages. */
const SYSTEM_TEXT = /^(?:Operation aborted|Command aborted)$/;

/** Where the header ends (0 when it is not on screen). */
function headerEnd(lines: readonly string[], end: number): number {
  const title = lines.findIndex((l) => HEADER_TITLE.test(l));
  if (title < 0 || title >= end) return 0;
  let i = title + 1;
  while (i < end && (isBlank(lines[i] ?? "") || HEADER_LINE.test(lines[i] ?? ""))) i++;
  return i;
}

/** Where the bottom chrome starts: the upper of the two rules around the input box or a dialog. */
function bottomStart(lines: readonly string[]): number {
  const rules: number[] = [];
  for (let i = lines.length - 1; i >= 0 && rules.length < 2; i--) if (isRule(lines[i] ?? "")) rules.push(i);
  return rules.length === 2 ? (rules[1] ?? lines.length) : lines.length;
}

/** One part of the conversation: its lines and the blank lines above it (undefined: cut off at the top). */
interface Part {
  readonly lines: string[];
  readonly gap: number | undefined;
  /** 1 for a padded box (a prompt, a tool), 0 for plain text; undefined until it is worked out. */
  pad: number | undefined;
  readonly kind: "text" | "tool" | "system" | "edge";
}

/**
 * The parts of the conversation: runs of lines two or more blank lines apart, an interrupt notice
 * one blank line under the answer it cut, the working line; `header`: whether pi's header is above.
 */
function parts(lines: readonly string[], header: boolean): Part[] {
  const out: Part[] = header ? [{ lines: [], gap: undefined, pad: 1, kind: "edge" }] : [];
  let current: string[] = [];
  let gap: number | undefined = header ? 0 : undefined;
  let blanks = 0;
  const flush = (next: number | undefined) => {
    if (current.length === 0) return;
    const last = current[current.length - 1] ?? "";
    const notice = current.length > 2 && current[current.length - 2] === "" && SYSTEM_TEXT.test(last.trim());
    const body = notice ? current.slice(0, -2) : current;
    out.push(classify(body, gap));
    if (notice) out.push({ lines: [last], gap: 1, pad: 0, kind: "system" });
    current = [];
    gap = next;
  };
  for (const line of lines) {
    if (isBlank(line)) {
      blanks++;
      continue;
    }
    if (WORKING.test(line)) {
      flush(blanks);
      out.push({ lines: [], gap: blanks, pad: 0, kind: "edge" });
      gap = 0;
      blanks = 0;
      continue;
    }
    if (blanks >= 2 && current.length > 0) flush(blanks);
    else if (blanks === 1 && current.length > 0) current.push("");
    else if (current.length === 0 && gap !== undefined) gap += blanks;
    blanks = 0;
    current.push(line);
  }
  flush(undefined);
  // The input box's rule below: plain, one blank line under plain text, two under a box.
  out.push({ lines: [], gap: blanks, pad: 0, kind: "edge" });
  return out;
}

function classify(lines: string[], gap: number | undefined): Part {
  if (SHELL_MARK.test(lines[0] ?? "")) return { lines, gap, pad: 1, kind: "tool" };
  if (lines.length === 1 && SYSTEM_TEXT.test((lines[0] ?? "").trim())) return { lines, gap, pad: 0, kind: "system" };
  return { lines, gap, pad: undefined, kind: "text" };
}

/**
 * Works out which text parts are padded boxes (prompts): pi puts one blank line between parts and a
 * box adds one of padding on each side, so the blank lines between two parts say how many of them
 * are boxes, and the known ones (tools, notices, the edges) tell the others.
 */
function solvePads(list: Part[]): void {
  for (let changed = true; changed; ) {
    changed = false;
    for (let i = 1; i < list.length; i++) {
      const gap = list[i]?.gap;
      const above = list[i - 1];
      const here = list[i];
      if (gap === undefined || !above || !here) continue;
      if (above.pad !== undefined && here.pad === undefined && valid(gap - 1 - above.pad)) {
        here.pad = gap - 1 - above.pad;
        changed = true;
      } else if (here.pad !== undefined && above.pad === undefined && valid(gap - 1 - here.pad)) {
        above.pad = gap - 1 - here.pad;
        changed = true;
      }
    }
  }
}

function valid(pad: number): boolean {
  return pad === 0 || pad === 1;
}

function parseParts(lines: readonly string[], header: boolean): ParsedMessage[] {
  const list = parts(lines, header);
  solvePads(list);
  const messages: ParsedMessage[] = [];
  for (const part of list) {
    if (part.kind === "edge") continue;
    const first = part.lines[0] ?? "";
    const shell = SHELL_MARK.exec(first);
    if (part.kind === "tool" && shell) {
      const output = part.lines
        .slice(1)
        .filter((l) => !TOOL_TIME.test(l))
        .map((l) => l.replace(/^ /, ""));
      messages.push({
        role: ChatRole.TOOL,
        toolName: "shell",
        toolTarget: (shell[1] ?? "").trim(),
        text: joinText(output),
      });
      continue;
    }
    const text = joinText(part.lines.map((l) => l.replace(/^ /, "")));
    if (text === "") continue;
    if (part.kind === "system") {
      messages.push({ role: ChatRole.SYSTEM, text });
      continue;
    }
    // Where the blank lines leave it open: a prompt starts a turn, after an answer or an interrupt.
    const previous = messages[messages.length - 1]?.role;
    const prompt =
      part.pad !== undefined
        ? part.pad === 1
        : previous === undefined || previous === ChatRole.ASSISTANT || previous === ChatRole.SYSTEM;
    messages.push({ role: prompt ? ChatRole.USER : ChatRole.ASSISTANT, text });
  }
  return messages;
}
