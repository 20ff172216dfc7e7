import { PromptEffect, PromptKind } from "../../../../gen/staragent/v1/session_pb.js";
import { approvalEffect, numberedOptions, type ScreenChoice, type ScreenPrompt } from "../prompt.js";

/** The key hint at the foot of every Copilot CLI dialog (1.0.102): its options are above it. */
const DIALOG_FOOTER = /↑\/↓ to navigate · enter to select/;
/** Question lines by kind (docs/approvals.md, "Copilot CLI"); any other question is a QUESTION. */
const QUESTION_RULES: readonly { kind: PromptKind; pattern: RegExp }[] = [
  { kind: PromptKind.TRUST, pattern: /^Do you trust the files in this folder\?$/ },
  { kind: PromptKind.APPROVAL, pattern: /^Do you want to .+\?$/ },
];
/** The folder trust's choice that is kept for later sessions. */
const REMEMBER = /\bremember this folder\b/i;
/** The selected option's marker. */
const SELECTED = /^\s*❯\s*\d/;
/** The rule under a dialog's title. */
const TITLE_RULE = /^─+$/;
/** The shortcut an option names at its end: `(Esc)`, `(Esc to stop)`. */
const ESC_SHORTCUT = /\s\(Esc(?: to \w+)?\)$/i;

/** A line of a box with its borders taken off (two levels: the dialog and the command box in it). */
function unboxed(line: string): string {
  let text = line.trim();
  for (let level = 0; level < 2; level++) {
    const inner = /^[│╭╰](.*?)[│╮╯]?$/.exec(text);
    if (!inner || !text.startsWith("│")) break;
    text = (inner[1] ?? "").trim();
  }
  return text;
}

/**
 * Reads a Copilot CLI dialog from its whole visible screen (ANSI stripped): the tool approval
 * (`Do you want to run this command?`), the folder trust question, or another question in the same
 * box. Every dialog ends with `↑/↓ to navigate · enter to select · esc to cancel`; a choice is picked
 * by moving the selection (`❯`) to it and pressing Enter, and Escape is the "No" that names it.
 */
export function readCopilotPrompt(screen: string): ScreenPrompt | undefined {
  const lines = screen.split("\n");
  const footer = lines.findLastIndex((l) => DIALOG_FOOTER.test(l));
  if (footer < 0) return undefined;
  // The dialog's box: from its top corner above the footer.
  let top = footer;
  while (top > 0 && !/^\s*╭/.test(lines[top] ?? "")) top--;
  const body = lines.slice(top + 1, footer).map(unboxed);
  const options = numberedOptions(body);
  const first = options[0];
  if (!first) return undefined;
  let questionLine = first.line - 1;
  while (questionLine >= 0 && (body[questionLine] ?? "") === "") questionLine--;
  const question = body[questionLine] ?? "";
  if (question === "") return undefined;
  const kind = QUESTION_RULES.find((r) => r.pattern.test(question))?.kind ?? PromptKind.QUESTION;
  const selected = Math.max(
    0,
    options.findIndex((o) => SELECTED.test(body[o.line] ?? "")),
  );
  const choices: ScreenChoice[] = options.map((o, index) => {
    // The option Escape picks refuses and stops the turn, whatever else its words offer.
    const byEscape = ESC_SHORTCUT.test(o.label);
    const effect =
      kind === PromptKind.QUESTION
        ? PromptEffect.ANSWER
        : byEscape
          ? PromptEffect.DENY
          : kind === PromptKind.TRUST && REMEMBER.test(o.label)
            ? PromptEffect.ALLOW_ALWAYS
            : approvalEffect(o.label);
    const keys = byEscape ? ["Escape"] : moveTo(selected, index);
    return {
      id: `${o.number}`,
      label: o.label,
      effect,
      keys,
      ...(effect === PromptEffect.TELL_INSTEAD ? { takesText: true } : {}),
    };
  });
  // Between the title and the question: the title (the tool's intention), its rule, the command box.
  const subject = body.slice(0, questionLine).filter((l) => l !== "" && !TITLE_RULE.test(l) && !/^[╭╰]/.test(l));
  if (kind === PromptKind.APPROVAL) {
    const [title, ...command] = subject;
    return {
      kind,
      question,
      ...(command.length > 0 ? { command: command.join("\n") } : {}),
      ...(title ? { detail: title } : {}),
      choices,
    };
  }
  return { kind, question, ...(subject.length > 0 ? { detail: subject.join("\n") } : {}), choices };
}

/** Arrow keys from the selected option to `index`, then Enter. */
function moveTo(selected: number, index: number): string[] {
  const step = index > selected ? "Down" : "Up";
  return [...Array.from({ length: Math.abs(index - selected) }, () => step), "Enter"];
}
