import { PromptEffect, PromptKind } from "../../../../gen/staragent/v1/session_pb.js";
import { approvalEffect, numberedOptions, type ScreenChoice, type ScreenPrompt } from "../prompt.js";

/** Codex's question lines (0.6x to 0.17x: the prompt fixtures, docs/approvals.md), by kind. */
const QUESTION_RULES: readonly { kind: PromptKind; pattern: RegExp }[] = [
  {
    kind: PromptKind.APPROVAL,
    pattern:
      /^[\s›>]*(Would you like to (?:run the following command|make the following edits|grant these permissions)\?|Allow command\?)\s*$/,
  },
  { kind: PromptKind.TRUST, pattern: /^[\s›>]*(Do you trust the contents of this directory\?|Trust this folder\?)/ },
];
/** The footer of a question asked through the composer (`enter to submit answer`). */
const QUESTION_FOOTER = /\benter to submit answer\b/i;
/** The option's shortcut at the end of its label: `(y)`, `(p)`, `(esc)`. */
const SHORTCUT = /\s\((\w|esc)\)$/i;
/** The selected option's marker. */
const SELECTED = /^\s*[›>]\s*\d/;
/** The command line of an approval (`$ rm -rf build`). */
const COMMAND_LINE = /^\s*\$ (.*)$/;
/** An edit's file line (`• Edit src/a.ts`, `Update src/a.ts (+1 -1)`). */
const EDIT_FILE = /^\s*(?:[•└]\s*)?(?:Edit(?:ed)?|Update(?:d)?|Add(?:ed)?|Create(?:d)?|Delete(?:d)?)\s+(\S+)/;
/** A diff line as Codex draws it: a line number, then `+`, `-` or a space and the text. */
const DIFF_LINE = /^\s*\d+\s([+\- ])(.*)$/;
/** The option label of a question's free-text answer. */
const FREE_TEXT_OPTION = /^(None of the above|Other|Type)/i;

/**
 * Reads a Codex prompt from its whole visible screen (ANSI stripped): an approval or trust question
 * with numbered options, or a question asked through the composer (`enter to submit answer`). Codex
 * does not write a pending approval to its rollout (docs/approvals.md), so the screen is the source; a
 * choice is picked by its own shortcut key where it shows one (`y`, `p`, `esc`), else by moving the
 * selection to it and pressing Enter, never by typing its number into a text box.
 */
export function readCodexPrompt(screen: string): ScreenPrompt | undefined {
  const lines = screen.split("\n");
  const found = findQuestion(lines);
  if (!found) return undefined;
  const below = lines.slice(found.line + 1);
  const options = numberedOptions(below);
  if (options.length === 0) return undefined;
  const selected = options.findIndex((o) => SELECTED.test(below[o.line] ?? ""));
  const choices: ScreenChoice[] = options.map((o, index) => {
    const label = o.label.replace(SHORTCUT, "");
    const shortcut = SHORTCUT.exec(o.label)?.[1];
    const effect = found.kind === PromptKind.QUESTION ? PromptEffect.ANSWER : approvalEffect(label);
    const keys = shortcut
      ? [shortcut.toLowerCase() === "esc" ? "Escape" : shortcut]
      : moveTo(Math.max(selected, 0), index);
    const takesText =
      effect === PromptEffect.TELL_INSTEAD || (found.kind === PromptKind.QUESTION && FREE_TEXT_OPTION.test(label));
    return { id: `${o.number}`, label: o.label, effect, keys, ...(takesText ? { takesText } : {}) };
  });
  const subjectLines = below.slice(0, options[0]?.line ?? 0).map((l) => l.trimEnd());
  return { kind: found.kind, question: found.question, ...subject(found.kind, subjectLines), choices };
}

/** The question line; for a composer question, the first non-blank line above its options. */
function findQuestion(lines: readonly string[]): { kind: PromptKind; question: string; line: number } | undefined {
  for (let i = lines.length - 1; i >= 0; i--) {
    for (const rule of QUESTION_RULES) {
      const match = rule.pattern.exec(lines[i] ?? "");
      if (match) return { kind: rule.kind, question: (match[1] ?? "").trim(), line: i };
    }
  }
  const footer = lines.findLastIndex((l) => QUESTION_FOOTER.test(l));
  if (footer < 0) return undefined;
  const first = lines.findIndex((l, i) => i < footer && /^\s*[›>]?\s*1\.\s/.test(l));
  for (let i = first - 1; i >= 0; i--) {
    const text = (lines[i] ?? "").trim();
    if (text !== "") return { kind: PromptKind.QUESTION, question: text, line: i };
  }
  return undefined;
}

/** Arrow keys from the selected option to `index`, then Enter. */
function moveTo(selected: number, index: number): string[] {
  const step = index > selected ? "Down" : "Up";
  return [...Array.from({ length: Math.abs(index - selected) }, () => step), "Enter"];
}

/** The command, the edit or the reason between the question and the options. */
function subject(
  kind: PromptKind,
  lines: readonly string[],
): Pick<ScreenPrompt, "command" | "filePath" | "diff" | "detail" | "truncated"> {
  const text = lines.map((l) => l.trim()).filter((l) => l !== "");
  if (kind !== PromptKind.APPROVAL) return text.length > 0 ? { detail: text.join("\n") } : {};
  const start = lines.findIndex((l) => COMMAND_LINE.test(l));
  if (start >= 0) {
    // A long command continues on the lines below its `$ ` line, up to the first blank one.
    const rest: string[] = [];
    for (const l of lines.slice(start + 1)) {
      if (l.trim() === "") break;
      rest.push(l.trim());
    }
    // Codex wraps a long command at a space, and the screen cannot tell that wrap from a line break in
    // the command: joined with the space, and marked as not certain to be whole.
    const command = [COMMAND_LINE.exec(lines[start] ?? "")?.[1] ?? "", ...rest].join(" ");
    const detail = lines
      .slice(0, start)
      .map((l) => l.trim())
      .filter((l) => l !== "")
      .join("\n");
    return { command, detail, ...(rest.length > 0 ? { truncated: true } : {}) };
  }
  const file = lines.map((l) => EDIT_FILE.exec(l)?.[1]).find((f) => f !== undefined);
  const diff = lines
    .map((l) => DIFF_LINE.exec(l))
    .filter((m) => m !== null)
    .map((m) => `${m[1]}${m[2]}`);
  return {
    ...(file ? { filePath: file } : {}),
    ...(diff.length > 0 ? { diff: diff.join("\n") } : {}),
    detail: text.filter((l) => !DIFF_LINE.test(l)).join("\n"),
  };
}
