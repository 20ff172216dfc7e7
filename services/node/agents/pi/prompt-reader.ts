import { PromptEffect, PromptKind } from "../../../../gen/staragent/v1/session_pb.js";
import { approvalEffect, type ScreenChoice, type ScreenPrompt } from "../prompt.js";

/**
 * The key hint under every selection dialog an extension opens (`ctx.ui.select`, 0.73): pi has no
 * approval of its own; extensions such as its permission gate ask through this dialog.
 */
const SELECT_FOOTER = /^\s*↑↓ navigate\s+enter select\s+escape\/ctrl\+c cancel\s*$/;
/** An option line: `→ Yes` (selected) or `  No`. */
const OPTION = /^ {1,2}(→ | {2})(\S.*?)\s*$/;
/** The selected option's marker. */
const SELECTED = "→ ";
/** The rule that separates the conversation from the dialog (where the input box is otherwise). */
const RULE = /^─{8,}$/;

/**
 * Reads an extension's selection dialog from a pi screen (ANSI stripped): its title (for the
 * permission gate: `⚠️ Dangerous command:`, the command indented, `Allow?`), its options, the selected
 * one marked `→`. An option is picked by moving the selection to it and pressing Enter; Escape cancels
 * the dialog, which the permission gate takes as a refusal. Yes/No options make it an approval, with
 * the indented lines of its title as the command; any other list is a question.
 */
export function readPiPrompt(screen: string): ScreenPrompt | undefined {
  const lines = screen.split("\n");
  const footer = lines.findLastIndex((l) => SELECT_FOOTER.test(l));
  if (footer < 0) return undefined;
  let last = footer - 1;
  while (last >= 0 && (lines[last] ?? "").trim() === "") last--;
  let first = last;
  while (first - 1 >= 0 && OPTION.test(lines[first - 1] ?? "")) first--;
  const options = lines.slice(first, last + 1).map((l) => OPTION.exec(l));
  if (options.length === 0 || options.some((o) => !o)) return undefined;
  let top = first - 1;
  while (top >= 0 && !RULE.test(lines[top] ?? "")) top--;
  const title = lines.slice(top + 1, first).map((l) => l.replace(/^ /, "").trimEnd());
  while (title.length > 0 && title[title.length - 1] === "") title.pop();
  while (title.length > 0 && title[0] === "") title.shift();
  const question = title[title.length - 1]?.trim() ?? "";
  if (question === "") return undefined;
  const selected = Math.max(
    0,
    options.findIndex((o) => o?.[1] === SELECTED),
  );
  const effects = options.map((o) => approvalEffect(o?.[2] ?? ""));
  const approval = effects.includes(PromptEffect.ALLOW_ONCE) && effects.includes(PromptEffect.DENY);
  const kind = approval ? PromptKind.APPROVAL : PromptKind.QUESTION;
  const choices: ScreenChoice[] = options.map((o, index) => ({
    id: `${index + 1}`,
    label: o?.[2] ?? "",
    effect: approval ? (effects[index] ?? PromptEffect.UNSPECIFIED) : PromptEffect.ANSWER,
    keys: moveTo(selected, index),
  }));
  const body = title.slice(0, -1);
  const command = body.filter((l) => /^ {2}\S/.test(l)).map((l) => l.trim());
  const detail = body.filter((l) => l.trim() !== "" && !/^ {2}\S/.test(l)).map((l) => l.trim());
  return {
    kind,
    question,
    ...(approval && command.length > 0 ? { command: command.join("\n") } : {}),
    ...(detail.length > 0 || (!approval && command.length > 0)
      ? { detail: [...detail, ...(approval ? [] : command)].join("\n") }
      : {}),
    choices,
  };
}

/** Arrow keys from the selected option to `index`, then Enter. */
function moveTo(selected: number, index: number): string[] {
  const step = index > selected ? "Down" : "Up";
  return [...Array.from({ length: Math.abs(index - selected) }, () => step), "Enter"];
}
