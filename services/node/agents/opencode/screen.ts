import { PromptKind } from "../../../../gen/staragent/v1/session_pb.js";
import type { PromptSignal } from "../agent.js";

/** The permission dialog (1.x): `△ Permission required`, the request on the next line. */
const PERMISSION = /^\s*△\s+(Permission required)\s*\n\s*(\S[^\n]*)?/m;
/** The footer hint while a turn runs. */
const WORKING_FOOTER = /\besc (to )?interrupt\b/;

/** A visible question at the bottom of an opencode pane, if any. */
export function opencodeScreenPrompt(screen: string): PromptSignal | undefined {
  const match = PERMISSION.exec(screen);
  if (!match) return undefined;
  const request = match[2]?.trim();
  return { kind: PromptKind.APPROVAL, text: request ? `${match[1]}: ${request}` : (match[1] ?? "") };
}

/** True when the footer says a turn runs. */
export function opencodeScreenWorking(screen: string): boolean {
  return WORKING_FOOTER.test(screen);
}
