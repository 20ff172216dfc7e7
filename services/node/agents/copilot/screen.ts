import { PromptKind } from "../../../../gen/staragent/v1/session_pb.js";
import type { PromptSignal } from "../agent.js";
import { readCopilotPrompt } from "./prompt-reader.js";

/**
 * The footer while a turn runs (1.0.102): `◎ Working esc esc edit prompt`, `◉ Working · 15 B esc esc
 * interrupt`, and `○ Cancelling` after Escape; the spinner glyph cycles.
 */
const WORKING_FOOTER = /^\s*[○◎◉●]\s+(?:Working|Cancelling)\b/m;

/** A dialog at the bottom of a Copilot CLI pane (approval, folder trust, a question), if any. */
export function copilotScreenPrompt(screen: string): PromptSignal | undefined {
  const read = readCopilotPrompt(screen);
  if (!read) return undefined;
  const subject = read.command ?? read.detail ?? "";
  const text = read.kind === PromptKind.APPROVAL && subject !== "" ? `${read.question} ${subject}` : read.question;
  return { kind: read.kind, text };
}

/** True when the footer says a turn runs. */
export function copilotScreenWorking(screen: string): boolean {
  return WORKING_FOOTER.test(screen);
}
