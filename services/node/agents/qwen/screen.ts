import type { PromptSignal } from "../agent.js";
import { readQwenPrompt } from "./prompt-reader.js";

/** The line shown while a turn runs: `⠧ Just a moment… (2s · esc to cancel)`. */
const WORKING_LINE = /\(\d+s\b[^)\n]*·\s*esc to cancel\)/;
/** The titles Qwen Code sets (0.24): `Qwen - dir`, `◐︎ Qwen - dir` while working, `✳︎ Qwen - dir` asking. */
const READY_TITLE = /^Qwen - /;
const WORKING_TITLE = /^[◐◓◑◒]\uFE0E?\s+Qwen - /;
const APPROVAL_TITLE = /^✳\uFE0E?\s+Qwen - /;
/** Qwen Code puts a prompt cancelled before its reply back in the input box and says so in the footer. */
const CANCELLED_FOOTER = /Press Esc again to clear\./;
/** The notice of a cancelled reply. */
const CANCELLED_NOTICE = /^\s*●\uFE0E?\s+Request cancelled\.\s*$/m;

/** What the pane title says of the turn. */
export type QwenTitle = "ready" | "working" | "approval" | "none";

/** The title's state signal ("none" for a title Qwen Code did not set). */
export function qwenTitleSignal(title: string): QwenTitle {
  if (APPROVAL_TITLE.test(title)) return "approval";
  if (WORKING_TITLE.test(title)) return "working";
  return READY_TITLE.test(title) ? "ready" : "none";
}

/** A visible dialog at the bottom of a Qwen Code pane, if any. */
export function qwenScreenPrompt(screen: string): PromptSignal | undefined {
  const read = readQwenPrompt(screen);
  if (!read) return undefined;
  return { kind: read.kind, text: read.command ? `${read.question} ${read.command}` : read.question };
}

/** True when the pane shows the working line. */
export function qwenScreenWorking(screen: string): boolean {
  return WORKING_LINE.test(screen);
}

/** The input box's line: `> text` at column 0 (the conversation's prompts are indented). */
const INPUT_LINE = /^> (.*?)[\s\u200b]*$/;
/** Characters of the prompt compared with the input box (its first line, at any width). */
const INPUT_SNIPPET_CHARS = 40;

/**
 * True when the screen says the newest turn was cancelled: its footer (`Press Esc again to clear.`,
 * shown for a moment), the notice, or the turn's prompt put back into the input box.
 */
export function qwenScreenCancelled(screen: string, prompt: string): boolean {
  if (CANCELLED_FOOTER.test(screen) || CANCELLED_NOTICE.test(screen)) return true;
  const wanted = (prompt.trim().split("\n")[0] ?? "").slice(0, INPUT_SNIPPET_CHARS);
  if (wanted === "") return false;
  return screen.split("\n").some((line) => INPUT_LINE.exec(line)?.[1]?.startsWith(wanted) === true);
}
