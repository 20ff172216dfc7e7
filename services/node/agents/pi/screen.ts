import type { PromptSignal } from "../agent.js";
import { readPiPrompt } from "./prompt-reader.js";

/** The line above the input box while a turn runs (0.73): a braille spinner and `Working...`. */
const WORKING_LINE = /^\s*[⠀-⣿]\s+Working\.\.\.\s*$/m;

/** A dialog at the bottom of a pi pane (an extension's selection: an approval or a question), if any. */
export function piScreenPrompt(screen: string): PromptSignal | undefined {
  const read = readPiPrompt(screen);
  if (!read) return undefined;
  return { kind: read.kind, text: read.command ? `${read.question} ${read.command}` : read.question };
}

/** True when the screen shows a turn running (`⠧ Working...` above the input box). */
export function piScreenWorking(screen: string): boolean {
  return WORKING_LINE.test(screen);
}
