import { PromptKind } from "../../../../gen/staragent/v1/session_pb.js";
import type { PromptSignal } from "../agent.js";

/** Codex's on-screen questions (docs/status.md "Per CLI", 0.6x to 0.17x). */
const PROMPT_RULES: readonly { kind: PromptKind; pattern: RegExp }[] = [
  {
    kind: PromptKind.APPROVAL,
    pattern:
      /^[\s›>]*(Would you like to (?:run the following command|make the following edits|grant these permissions)\?|Allow command\?)/m,
  },
  { kind: PromptKind.TRUST, pattern: /^[\s›>]*(Do you trust the contents of this directory\?|Trust this folder\?)/m },
  { kind: PromptKind.QUESTION, pattern: /^\s*(.*\benter to submit answer\b.*)$/im },
];

/** The working line shown before the first token: `• Working (2s • esc to interrupt)`. */
const WORKING_LINE = /^\s*[•◦]\s+Working \(\d+s/m;
/** The braille spinner prefixing the title while a turn runs. */
const WORKING_TITLE = /^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/;
/** The title while an approval is asked (blinking `[ ! ]` / `[ . ]`). */
const APPROVAL_TITLE = /^\[ [!.] \] Action Required/;

/** A visible question at the bottom of a Codex pane, if any. */
export function codexScreenPrompt(screen: string): PromptSignal | undefined {
  for (const rule of PROMPT_RULES) {
    const match = rule.pattern.exec(screen);
    if (match) return { kind: rule.kind, text: (match[1] ?? match[0]).trim() };
  }
  return undefined;
}

/** True when the pane shows the working line. */
export function codexScreenWorking(screen: string): boolean {
  return WORKING_LINE.test(screen);
}

/** The title's state signal: the reliable one for Codex. */
export function codexTitleSignal(title: string): "working" | "approval" | "none" {
  if (APPROVAL_TITLE.test(title)) return "approval";
  return WORKING_TITLE.test(title) ? "working" : "none";
}
