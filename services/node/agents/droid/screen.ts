import { PromptKind } from "../../../../gen/staragent/v1/session_pb.js";
import type { PromptSignal } from "../agent.js";
import { readDroidPrompt } from "./prompt-reader.js";

/**
 * The working line while a turn runs (0.225): ` ⠘ Thinking...  (Press ESC to stop)`, `Streaming...`,
 * and ` ⠰ Cancelling tools...  (Please wait)` for a moment after Escape (no prompt is taken then).
 */
const WORKING_LINE = /^\s*\S\s+\S.*?\.\.\.\s+\((?:Press ESC to stop|Please wait)\)\s*$/m;

/** A dialog at the bottom of a Factory droid pane (approval, folder trust), if any. */
export function droidScreenPrompt(screen: string): PromptSignal | undefined {
  const read = readDroidPrompt(screen);
  if (!read) return undefined;
  const text = read.kind === PromptKind.APPROVAL && read.command ? `${read.question} ${read.command}` : read.question;
  return { kind: read.kind, text };
}

/** True when the working line says a turn runs or is being cancelled. */
export function droidScreenWorking(screen: string): boolean {
  return WORKING_LINE.test(screen);
}
