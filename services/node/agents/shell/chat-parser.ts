import { ChatRole, Cli } from "../../../../gen/staragent/v1/session_pb.js";
import type { ChatParser, ParsedMessage } from "../../chat/chat-parser.js";
import { cleanLines, isBlank, joinText } from "../../chat/screen-lines.js";

/**
 * A shell's chat: each command typed at a prompt is a `user` message, and what the command printed is
 * a `tool` message (tool `shell`, target the command). Shells keep no log of their own, so the pane's
 * history is all there is; prompts are recognised by the shape of the prompt the shell shows now:
 * the bottom line when it is a bare prompt (`user@host:~/dir$`), else the last line that looks like
 * one. That prompt is the input line, not a message. Output printed before the first prompt in the
 * history (a banner, the end of an earlier command) belongs to no command and is left out.
 */
export const shellChatParser: ChatParser = {
  cli: Cli.SHELL,
  parse(raw) {
    const lines = cleanLines(raw);
    while (lines.length > 0 && isBlank(lines[lines.length - 1] ?? "")) lines.pop();
    const last = lines[lines.length - 1] ?? "";
    const live = BARE_PROMPT.test(last) && last.length <= MAX_PROMPT_LENGTH;
    const model = live ? last : findPromptModel(lines);
    if (model === undefined) return [];
    const matcher = promptMatcher(model);
    return parseCommands(live ? lines.slice(0, -1) : lines, matcher);
  },
};

/** Longest prompt recognised; a longer line is output, not a prompt. */
const MAX_PROMPT_LENGTH = 120;
/** A prompt waiting for input: ends in one of the usual prompt characters. */
const BARE_PROMPT = /^(?:\S.*[$#%>❯]|[$#%❯])$/;
/** A prompt followed by a command, when the shell is busy and shows no bare prompt. */
const PROMPT_WITH_COMMAND = /^(\S.{0,118}?[$#%❯]) \S/;
/** Characters where the fixed part of a prompt ends (the cwd and what follows it change). */
const PROMPT_VARIABLE_PART = /[:~/ [({]/;
/** The continuation prompt (`PS2`) shown for a command that spans lines. */
const CONTINUATION = /^> ?(.*)$/;

function findPromptModel(lines: readonly string[]): string | undefined {
  for (let i = lines.length - 1; i >= 0; i--) {
    const match = PROMPT_WITH_COMMAND.exec(lines[i] ?? "");
    if (match) return match[1];
  }
  return undefined;
}

/** Splits a line into prompt and command when it starts with a prompt shaped like `model`. */
type PromptMatcher = (line: string) => string | undefined;

function promptMatcher(model: string): PromptMatcher {
  const terminator = model.slice(-1);
  const variable = model.slice(0, -1).search(PROMPT_VARIABLE_PART);
  const head = variable > 0 ? model.slice(0, variable) : model.slice(0, -1);
  return (line) => {
    if (!line.startsWith(head)) return undefined;
    const end = line.indexOf(`${terminator} `, head.length);
    // A prompt with no fixed part (zsh's `% `) must start the line.
    if (end >= 0 && end <= MAX_PROMPT_LENGTH && (head !== "" || end === 0)) return line.slice(end + 2);
    if (head === "") return line === terminator ? "" : undefined;
    return line.endsWith(terminator) && line.length <= MAX_PROMPT_LENGTH ? "" : undefined;
  };
}

function parseCommands(lines: readonly string[], matcher: PromptMatcher): ParsedMessage[] {
  const out: ParsedMessage[] = [];
  let command: string[] | undefined;
  let output: string[] = [];
  const flush = () => {
    if (!command) return;
    const text = command.join("\n").trim();
    if (text !== "") {
      out.push({ role: ChatRole.USER, text });
      const result = joinText(output);
      if (result !== "") out.push({ role: ChatRole.TOOL, toolName: "shell", toolTarget: text, text: result });
    }
    command = undefined;
    output = [];
  };
  for (const line of lines) {
    const typed = matcher(line);
    if (typed !== undefined) {
      flush();
      command = [typed];
      continue;
    }
    const continuation = CONTINUATION.exec(line);
    if (command && output.length === 0 && continuation && command.join("").trim() !== "") {
      command.push(continuation[1] ?? "");
      continue;
    }
    if (command) output.push(line);
  }
  flush();
  return out;
}
