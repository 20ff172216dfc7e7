import { PromptEffect, PromptKind } from "../../../../gen/staragent/v1/session_pb.js";
import { approvalEffect, numberedOptions, type ScreenChoice, type ScreenPrompt } from "../prompt.js";

/** Qwen Code's dialog questions (docs/status.md "Qwen Code", 0.24), by kind. */
const QUESTION_RULES: readonly { kind: PromptKind; pattern: RegExp }[] = [
  {
    kind: PromptKind.APPROVAL,
    pattern: /^\s*(Allow execution\b.*\?|Apply this change\?|Do you want to proceed\?)\s*$/,
  },
  { kind: PromptKind.TRUST, pattern: /^\s*(Do you trust .*\?)\s*$/ },
];
/** The header of a tool's approval: `? Shell echo hi > marker.txt (Write a marker) ←`. */
const TOOL_HEADER = /^\s*\?\s+(\S+)\s+(.*?)\s*←?\s*$/;
/** The selected option's marker. */
const SELECTED = /^\s*›\s*\d/;
/** The option's shortcut at the end of its label: `(esc)`. */
const SHORTCUT = /\s\((esc)\)$/i;

/**
 * Reads a Qwen Code dialog from its whole visible screen (ANSI stripped): an approval (`Allow
 * execution of: 'echo'?` with `› 1. Yes, allow once` …) or a folder-trust question. The log holds the
 * tool call but not that it waits (docs/status.md), so the dialog's words come from the screen. A
 * choice is picked by moving the selection (`›`) to it and pressing Enter, or by its key (`esc`).
 */
export function readQwenPrompt(screen: string): ScreenPrompt | undefined {
  const lines = screen.split("\n");
  let found: { kind: PromptKind; question: string; line: number } | undefined;
  for (let i = lines.length - 1; i >= 0 && !found; i--) {
    for (const rule of QUESTION_RULES) {
      const match = rule.pattern.exec(lines[i] ?? "");
      if (match) {
        found = { kind: rule.kind, question: (match[1] ?? "").trim(), line: i };
        break;
      }
    }
  }
  if (!found) return undefined;
  const below = lines.slice(found.line + 1);
  const options = numberedOptions(below);
  if (options.length === 0) return undefined;
  const selected = Math.max(
    0,
    options.findIndex((o) => SELECTED.test(below[o.line] ?? "")),
  );
  const kind = found.kind;
  const choices: ScreenChoice[] = options.map((o, index) => {
    const effect = approvalEffect(o.label.replace(SHORTCUT, ""));
    return {
      id: `${o.number}`,
      label: o.label,
      effect: effect === PromptEffect.UNSPECIFIED && kind === PromptKind.TRUST ? PromptEffect.ANSWER : effect,
      keys: SHORTCUT.test(o.label) ? ["Escape"] : moveTo(selected, index),
    };
  });
  return { kind, question: found.question, ...subject(lines.slice(0, found.line)), choices };
}

/** The tool (`? Shell …` header) and its command: the lines between the header and the question. */
function subject(above: readonly string[]): Pick<ScreenPrompt, "command" | "detail" | "truncated"> {
  const header = above.findLastIndex((l) => TOOL_HEADER.test(l));
  if (header < 0) return {};
  const match = TOOL_HEADER.exec(above[header] ?? "");
  const tool = match?.[1] ?? "";
  const body = above
    .slice(header + 1)
    .map((l) => l.trim())
    .filter((l) => l !== "");
  if (tool !== "Shell") return { detail: `${tool} ${match?.[2] ?? ""}`.trim() };
  return { command: body.join("\n"), detail: tool, ...(body.length > 1 ? { truncated: true } : {}) };
}

/** Arrow keys from the selected option to `index`, then Enter. */
function moveTo(selected: number, index: number): string[] {
  const step = index > selected ? "Down" : "Up";
  return [...Array.from({ length: Math.abs(index - selected) }, () => step), "Enter"];
}
