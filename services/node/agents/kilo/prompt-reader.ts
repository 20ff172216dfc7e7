import { PromptEffect, PromptKind } from "../../../../gen/staragent/v1/session_pb.js";
import type { PromptSignal } from "../agent.js";
import { readOpencodePrompt } from "../opencode/prompt-reader.js";
import { opencodeScreenPrompt } from "../opencode/screen.js";
import type { ScreenPrompt } from "../prompt.js";

/**
 * The box Kilo CLI 7.7 opens on Reject (and on Escape at its permission dialog):
 * `┃  △ Reject permission`, `Tell Kilo what to do differently`, `enter confirm  esc cancel`.
 */
const REJECT_TITLE = /^[\s┃]*△\s+(Reject permission)\s*$/;
/** The box's footer, drawn once it takes keys. */
const REJECT_FOOTER = /\benter confirm\s+esc cancel\s*$/;
/** The dialog's border and indent before each line's text. */
const BORDER = /^[\s┃]*/;
/** The permission dialog's Reject, in its order of choices (the third: Right twice). */
const REJECT_LABEL = "Reject";
/** The keys that move to Reject and pick it, which opens the reject box. */
const TO_REJECT_BOX = ["Right", "Right", "Enter"] as const;

/**
 * Reads Kilo CLI's permission dialog (opencode's, docs/approvals.md) from its whole visible screen.
 * Unlike opencode's, Escape there does not reject: Reject (Right, Right, Enter) opens a box for
 * telling Kilo what to do instead, whose Enter confirms the rejection and ends the turn, so Reject
 * types both. The box, when it is what the screen shows, is a prompt of its own.
 */
export function readKiloPrompt(screen: string): ScreenPrompt | undefined {
  const box = readRejectBox(screen);
  if (box) return box;
  const prompt = readOpencodePrompt(screen);
  if (!prompt) return undefined;
  return {
    ...prompt,
    choices: prompt.choices.map((c) => (c.label === REJECT_LABEL ? { ...c, keys: [...TO_REJECT_BOX, "Enter"] } : c)),
  };
}

/** The prompt signal of a Kilo pane's bottom: the permission dialog, its always-allow step, or the reject box. */
export function kiloScreenPrompt(screen: string): PromptSignal | undefined {
  const box = readRejectBox(screen);
  return box ? { kind: PromptKind.APPROVAL, text: box.question } : opencodeScreenPrompt(screen);
}

/** The reject box, when it is the newest dialog on screen and drawn whole. */
function readRejectBox(screen: string): ScreenPrompt | undefined {
  const lines = screen.split("\n");
  const title = lines.findLastIndex((l) => REJECT_TITLE.test(l));
  if (title < 0) return undefined;
  const body = lines.slice(title + 1).map((l) => l.replace(BORDER, "").trim());
  const footer = body.findIndex((l) => REJECT_FOOTER.test(l));
  if (footer < 0) return undefined;
  const detail = body
    .slice(0, footer)
    .filter((l) => l !== "")
    .join("\n");
  return {
    kind: PromptKind.APPROVAL,
    question: "Reject permission",
    detail,
    choices: [
      { id: "1", label: "confirm", effect: PromptEffect.DENY, keys: ["Enter"] },
      // Kilo goes back to the permission dialog.
      { id: "2", label: "cancel", effect: PromptEffect.UNSPECIFIED, keys: ["Escape"] },
    ],
  };
}
