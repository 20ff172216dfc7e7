import { PromptEffect, PromptKind } from "../../../../gen/staragent/v1/session_pb.js";
import { approvalEffect, numberedOptions, type ScreenChoice, type ScreenPrompt } from "../prompt.js";

/** The approval dialog's question (0.225): `Command to approve · medium risk`. */
const APPROVAL_QUESTION = /^\s*(Command to approve\b.*?)\s*$/;
/** The approval dialog's footer, below its box of choices. */
const APPROVAL_FOOTER = /^\s*↑↓ navigate\s+Enter select\s+Esc cancel\b/;
/** A choice in the approval box: `│  Yes, allow   │`. */
const BOX_CHOICE = /^\s*│\s+(\S.*?)\s*│\s*$/;
/** The command line under the question: `↳ touch marker.txt`. */
const COMMAND_LINE = /^\s*↳\s?(.*)$/;
/** The tool line above the question: `Execute touch marker.txt`. */
const TOOL_LINE = /^\s{2,}([A-Z][A-Za-z]+)\s+\S/;
/** The reason droid gives under the command. */
const WHY_LINE = /^\s*Why this needs approval:\s*(.*)$/;
/** The folder-trust question on first start in a folder. */
const TRUST_QUESTION = /^\s*│?\s*(Trust this folder\?)\s*│?\s*$/;
/** How far above the footer the dialog's question may be. */
const DIALOG_LINES = 30;

/**
 * Reads a Factory droid dialog from its whole visible screen (ANSI stripped): the approval
 * (`Command to approve · medium risk`, `↳ <command>`, a box of `Yes, allow` / `Yes, and always
 * allow …` / `No, cancel`, the `↑↓ navigate   Enter select   Esc cancel` footer) or the folder-trust
 * question. The log holds the call but not that it waits (docs/status.md). The dialog opens with its
 * first choice selected and marks it only by weight, so a choice is picked by moving down from the
 * first and pressing Enter; `No, cancel` by Escape, as the footer says.
 */
export function readDroidPrompt(screen: string): ScreenPrompt | undefined {
  const lines = screen.split("\n");
  return readApproval(lines) ?? readTrust(lines);
}

function readApproval(lines: readonly string[]): ScreenPrompt | undefined {
  const footer = lines.findLastIndex((l) => APPROVAL_FOOTER.test(l));
  if (footer < 0) return undefined;
  const from = Math.max(0, footer - DIALOG_LINES);
  const questionLine = lines.slice(from, footer).findLastIndex((l) => APPROVAL_QUESTION.test(l));
  if (questionLine < 0) return undefined;
  const at = from + questionLine;
  const question = APPROVAL_QUESTION.exec(lines[at] ?? "")?.[1] ?? "";
  const labels = lines
    .slice(at + 1, footer)
    .map((l) => BOX_CHOICE.exec(l)?.[1])
    .filter((l): l is string => l !== undefined);
  if (labels.length === 0) return undefined;
  const choices: ScreenChoice[] = labels.map((label, index) => {
    const effect = approvalEffect(label);
    return {
      id: `${index + 1}`,
      label,
      effect,
      keys: effect === PromptEffect.DENY ? ["Escape"] : [...Array.from({ length: index }, () => "Down"), "Enter"],
    };
  });
  const commands: string[] = [];
  let why = "";
  for (const line of lines.slice(at + 1, footer)) {
    const command = COMMAND_LINE.exec(line);
    if (command) commands.push((command[1] ?? "").trim());
    const reason = WHY_LINE.exec(line);
    if (reason) why = (reason[1] ?? "").trim();
  }
  const tool = lines
    .slice(from, at)
    .map((l) => TOOL_LINE.exec(l)?.[1])
    .findLast((t) => t !== undefined);
  const detail = [tool, why].filter((t) => t !== undefined && t !== "").join(": ");
  return {
    kind: PromptKind.APPROVAL,
    question,
    ...(commands.length > 0 ? { command: commands.join("\n") } : {}),
    ...(detail !== "" ? { detail } : {}),
    choices,
  };
}

function readTrust(lines: readonly string[]): ScreenPrompt | undefined {
  const at = lines.findLastIndex((l) => TRUST_QUESTION.test(l));
  if (at < 0) return undefined;
  const below = lines.slice(at + 1);
  const options = numberedOptions(below);
  if (options.length === 0) return undefined;
  const selected = Math.max(
    0,
    options.findIndex((o) => /^\s*>/.test(below[o.line] ?? "")),
  );
  const folder = lines
    .slice(at + 1, at + 1 + (options[0]?.line ?? 0))
    .map((l) => l.replace(/^\s*│?\s*|\s*│?\s*$/g, ""))
    .find((l) => l.startsWith("/"));
  return {
    kind: PromptKind.TRUST,
    question: "Trust this folder?",
    ...(folder ? { detail: folder } : {}),
    choices: options.map((o, index) => ({
      id: `${o.number}`,
      label: o.label,
      effect: index === 0 ? PromptEffect.ALLOW_ONCE : PromptEffect.DENY,
      keys: [...Array.from({ length: Math.abs(index - selected) }, () => (index > selected ? "Down" : "Up")), "Enter"],
    })),
  };
}
