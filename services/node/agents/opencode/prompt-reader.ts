import { PromptEffect, PromptKind } from "../../../../gen/staragent/v1/session_pb.js";
import { approvalEffect, type ScreenChoice, type ScreenPrompt } from "../prompt.js";

/** The permission dialog's title (1.x): `┃  △ Permission required`. */
const PERMISSION = /^[\s┃]*△\s+(Permission required)\s*$/;
/**
 * The dialog "Allow always" opens before it takes effect (1.18): `┃  △ Always allow`, the patterns it
 * will allow (`- echo *`: broader than the one command asked about), and `Confirm   Cancel`.
 */
const ALWAYS_ALLOW = /^[\s┃]*△\s+(Always allow)\s*$/;
/** The always-allow dialog's choices, in its order. */
const ALWAYS_CHOICES = ["Confirm", "Cancel"] as const;
/** The dialog's border and indent before each line's text. */
const BORDER = /^[\s┃]*/;
/** The dialog's choices, in its order, as it words them. */
const CHOICES = ["Allow once", "Allow always", "Reject"] as const;
/** The request kind line (`# Shell command`, `# Edit file`, `# Web fetch`). */
const KIND_LINE = /^#\s+(.*)$/;
/** The request line of an edit (1.18.33 draws it with no `#` header): `→ Edit compat-edit.txt`. */
const EDIT_LINE = /^[→←]\s*(Edit|Write|Patch)\s+(\S.*)$/;
/** A line of the edit's diff as the dialog numbers it: `1 + first line`. */
const DIFF_LINE = /^\d+\s([+\- ])\s?(.*)$/;
/** A URL in a fetch request. */
const URL_TEXT = /\bhttps?:\/\/\S+/;

/**
 * Reads opencode's permission dialog from its whole visible screen (ANSI stripped). opencode holds
 * a pending permission in memory only (docs/approvals.md), so the screen is the source. Its choices sit
 * on one line and are picked with the arrow keys and Enter; the dialog opens on its first choice, and
 * Escape rejects. "Allow always" leads to a second dialog naming the patterns it will allow, read as a
 * prompt of its own, so a person sees them before confirming.
 */
export function readOpencodePrompt(screen: string): ScreenPrompt | undefined {
  const lines = screen.split("\n");
  const title = lines.findLastIndex((l) => PERMISSION.test(l));
  const always = lines.findLastIndex((l) => ALWAYS_ALLOW.test(l));
  if (always > title) return readAlwaysAllow(lines.slice(always + 1));
  if (title < 0) return undefined;
  const body = lines.slice(title + 1).map((l) => l.replace(BORDER, "").trimEnd());
  const choiceLine = body.findIndex((l) => l.startsWith(CHOICES[0]) && l.includes(CHOICES[2]));
  if (choiceLine < 0) return undefined;
  const request = body.slice(0, choiceLine).filter((l) => l.trim() !== "");
  const header = KIND_LINE.exec(request[0] ?? "")?.[1] ?? "";
  const rest = header === "" ? request : request.slice(1);
  const choices: ScreenChoice[] = CHOICES.map((label, index) => ({
    id: `${index + 1}`,
    label,
    effect: approvalEffect(label),
    keys: label === "Reject" ? ["Escape"] : [...Array.from({ length: index }, () => "Right"), "Enter"],
  }));
  const command = rest.find((l) => l.startsWith("$ "))?.slice(2);
  const url = rest.map((l) => URL_TEXT.exec(l)?.[0]).find((u) => u !== undefined);
  const edit = rest.map((l) => EDIT_LINE.exec(l)).find((m) => m !== null);
  const filePath = edit?.[2] ?? (/edit|write|patch/i.test(header) ? rest[0]?.replace(/^[→←]\s*\S+\s+/, "") : undefined);
  const diffLines = edit || filePath !== undefined ? rest.map((l) => DIFF_LINE.exec(l)).filter((m) => m !== null) : [];
  const diff = diffLines.map((m) => `${m[1]}${m[2]}`).join("\n");
  return {
    kind: PromptKind.APPROVAL,
    question: "Permission required",
    ...(command !== undefined
      ? { command }
      : url
        ? { url }
        : filePath
          ? { filePath, ...(diff !== "" ? { diff } : {}) }
          : {}),
    detail: [header, ...rest.filter((l) => !l.startsWith("$ ") && !DIFF_LINE.test(l))]
      .filter((l) => l !== "")
      .join("\n"),
    choices,
  };
}

/**
 * The always-allow confirmation: what it will allow, as opencode words it, with Confirm (allow always)
 * and Cancel (opencode goes back to the permission dialog, docs/compat.md), picked like the permission
 * dialog's choices.
 */
function readAlwaysAllow(after: readonly string[]): ScreenPrompt | undefined {
  const body = after.map((l) => l.replace(BORDER, "").trimEnd());
  const choiceLine = body.findIndex((l) => l.startsWith(ALWAYS_CHOICES[0]) && l.includes(ALWAYS_CHOICES[1]));
  if (choiceLine < 0) return undefined;
  const detail = body
    .slice(0, choiceLine)
    .filter((l) => l.trim() !== "")
    .join("\n");
  return {
    kind: PromptKind.APPROVAL,
    question: "Always allow",
    detail,
    choices: [
      { id: "1", label: "Confirm", effect: PromptEffect.ALLOW_ALWAYS, keys: ["Enter"] },
      { id: "2", label: "Cancel", effect: PromptEffect.DENY, keys: ["Right", "Enter"] },
    ],
  };
}
