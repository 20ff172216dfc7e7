import { PromptEffect, PromptKind } from "../../../../gen/staragent/v1/session_pb.js";
import { approvalEffect, numberedOptions, type ScreenChoice, type ScreenPrompt } from "../prompt.js";

/** Gemini CLI's dialog questions (docs/status.md "Gemini CLI", 0.61), by kind. */
const QUESTION_RULES: readonly { kind: PromptKind; pattern: RegExp }[] = [
  { kind: PromptKind.APPROVAL, pattern: /^(Allow execution\b.*\?|Apply this change\?|Do you want to proceed\?)$/ },
  { kind: PromptKind.TRUST, pattern: /^(Do you trust .*\?)$/ },
];
/** The header of a tool's approval: `? Shell  echo hi > marker.txt`. */
const TOOL_HEADER = /^\?\s+(\S+)\s+(.*)$/;
/** The selected option's marker. */
const SELECTED = /^●\s*/;
/** The option's shortcut at the end of its label: `(esc)`. */
const SHORTCUT = /\s\((esc)\)$/i;
/** One side of a box drawn around a line: `│ text │`. */
const BOX_EDGES = /^│\s?(.*?)\s?│$/;

/**
 * A dialog's lines with its boxes taken off: Gemini CLI draws the approval as a box (`│ … │`) with the
 * command in a box inside it; each line loses as many edges as it has.
 */
export function unboxed(lines: readonly string[]): string[] {
  return lines.map((raw) => {
    let line = raw.trim();
    for (let match = BOX_EDGES.exec(line); match; match = BOX_EDGES.exec(line)) line = (match[1] ?? "").trim();
    return line;
  });
}

/**
 * Reads a Gemini CLI dialog from its whole visible screen (ANSI stripped): an approval (`Allow
 * execution of [Shell]?` with `● 1. Allow once` …) or a folder-trust question. Gemini CLI writes a tool
 * call to its log only once it is answered (docs/status.md), so the screen is the only source. A
 * choice is picked by moving the selection (`●`) to it and pressing Enter, or by its own key (`esc`).
 */
export function readGeminiPrompt(screen: string): ScreenPrompt | undefined {
  const lines = unboxed(screen.split("\n"));
  const found = findQuestion(lines);
  if (!found) return undefined;
  const below = lines.slice(found.line + 1);
  const marked = below.map((l) => (SELECTED.test(l) ? l.replace(SELECTED, "") : l));
  const options = numberedOptions(marked);
  if (options.length === 0) return undefined;
  const selected = Math.max(
    0,
    options.findIndex((o) => SELECTED.test(below[o.line] ?? "")),
  );
  const choices: ScreenChoice[] = options.map((o, index) => {
    const label = o.label.replace(SHORTCUT, "");
    const shortcut = SHORTCUT.test(o.label);
    const effect = approvalEffect(label);
    return {
      id: `${o.number}`,
      label: o.label,
      effect: effect === PromptEffect.UNSPECIFIED && found.kind === PromptKind.TRUST ? PromptEffect.ANSWER : effect,
      keys: shortcut ? ["Escape"] : moveTo(selected, index),
    };
  });
  return { kind: found.kind, question: found.question, ...subject(lines.slice(0, found.line)), choices };
}

function findQuestion(lines: readonly string[]): { kind: PromptKind; question: string; line: number } | undefined {
  for (let i = lines.length - 1; i >= 0; i--) {
    for (const rule of QUESTION_RULES) {
      const match = rule.pattern.exec(lines[i] ?? "");
      if (match) return { kind: rule.kind, question: (match[1] ?? "").trim(), line: i };
    }
  }
  return undefined;
}

/** The tool and its command: the header `? Shell  cmd`, the command whole from the box inside. */
function subject(above: readonly string[]): Pick<ScreenPrompt, "command" | "detail" | "truncated"> {
  const header = above.findLastIndex((l) => TOOL_HEADER.test(l));
  if (header < 0) return {};
  const match = TOOL_HEADER.exec(above[header] ?? "");
  const tool = match?.[1] ?? "";
  const boxed = above.slice(header + 1).filter((l) => !/^[╭╰][─╮╯]*$/.test(l) && l !== "");
  const command = boxed.length > 0 ? boxed.join("\n") : (match?.[2] ?? "").trim();
  if (tool !== "Shell") return { detail: `${tool} ${(match?.[2] ?? "").trim()}`.trim() };
  return { command, detail: tool, ...(boxed.length > 1 ? { truncated: true } : {}) };
}

/** Arrow keys from the selected option to `index`, then Enter. */
function moveTo(selected: number, index: number): string[] {
  const step = index > selected ? "Down" : "Up";
  return [...Array.from({ length: Math.abs(index - selected) }, () => step), "Enter"];
}
