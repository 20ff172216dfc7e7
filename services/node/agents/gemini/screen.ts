import type { PromptSignal } from "../agent.js";
import { readGeminiPrompt } from "./prompt-reader.js";

/** The line shown while a turn runs: ` ⠹ Thinking... (esc to cancel, 1s)`. */
const WORKING_LINE = /\(esc to cancel, \d/;
/** The pane titles Gemini CLI sets (0.61): `◇  Ready (dir)`, `✦  Working… (dir)`, `✋  Action Required (dir)`. */
const READY_TITLE = /^◇\s+Ready\b/;
const WORKING_TITLE = /^✦\s+Working/;
const APPROVAL_TITLE = /^✋\s+Action Required\b/;

/** What the pane title says of the turn, the signal Gemini CLI keeps up to date itself. */
export type GeminiTitle = "ready" | "working" | "approval" | "none";

/** The title's state signal ("none" when the title is not one Gemini CLI sets, e.g. hidden by settings). */
export function geminiTitleSignal(title: string): GeminiTitle {
  if (APPROVAL_TITLE.test(title)) return "approval";
  if (WORKING_TITLE.test(title)) return "working";
  return READY_TITLE.test(title) ? "ready" : "none";
}

/** A visible dialog at the bottom of a Gemini CLI pane, if any. */
export function geminiScreenPrompt(screen: string): PromptSignal | undefined {
  const read = readGeminiPrompt(screen);
  if (!read) return undefined;
  const text = read.command ? `${read.question} ${read.command}` : read.question;
  return { kind: read.kind, text };
}

/** True when the pane shows the working line. */
export function geminiScreenWorking(screen: string): boolean {
  return WORKING_LINE.test(screen);
}
