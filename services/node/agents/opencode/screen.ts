import { PromptKind } from "../../../../gen/staragent/v1/session_pb.js";
import type { PromptSignal } from "../agent.js";

/** The permission dialog (1.x): `┃  △ Permission required`, the request (`$ command`) a few lines below. */
const PERMISSION = /^[\s┃]*△\s+(Permission required)\s*$/m;
/** The confirmation "Allow always" opens (1.18): `┃  △ Always allow`, then the patterns it will allow. */
const ALWAYS_ALLOW = /^[\s┃]*△\s+(Always allow)\s*$/m;
/** A pattern line of the always-allow confirmation: `- echo *`. */
const PATTERN_LINE = /^[\s┃]*- (\S.*?)\s*$/m;
/** The request line of the dialog: a shell command, else the first non-empty line. */
const REQUEST_LINE = /^[\s┃]*(\S.*?)\s*$/;
/** Lines below the dialog's title searched for the request. */
const REQUEST_SEARCH_LINES = 4;
/** The footer hint while a turn runs. */
const WORKING_FOOTER = /\besc (to )?interrupt\b/;

/** A visible question at the bottom of an opencode pane, if any. */
export function opencodeScreenPrompt(screen: string): PromptSignal | undefined {
  const match = PERMISSION.exec(screen);
  const always = ALWAYS_ALLOW.exec(screen);
  if (always && (!match || always.index > match.index)) {
    const pattern = PATTERN_LINE.exec(screen.slice(always.index + always[0].length))?.[1];
    return { kind: PromptKind.APPROVAL, text: pattern ? `Always allow: ${pattern}` : "Always allow" };
  }
  if (!match) return undefined;
  const below = screen
    .slice(match.index + match[0].length)
    .split("\n")
    .slice(1, 1 + REQUEST_SEARCH_LINES)
    .map((line) => REQUEST_LINE.exec(line)?.[1] ?? "")
    .filter((line) => line !== "");
  const request = below.find((line) => line.startsWith("$ ")) ?? below[0];
  return { kind: PromptKind.APPROVAL, text: request ? `Permission required: ${request}` : "Permission required" };
}

/** True when the footer says a turn runs. */
export function opencodeScreenWorking(screen: string): boolean {
  return WORKING_FOOTER.test(screen);
}
