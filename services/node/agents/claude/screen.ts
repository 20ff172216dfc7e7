import { PromptKind } from "../../../../gen/staragent/v1/session_pb.js";
import type { PromptSignal } from "../agent.js";

/**
 * Claude Code's on-screen questions (docs/status.md "Per CLI", 1.0.x to 2.1.x): each needs its question line and,
 * except trust, a numbered `❯ 1.` option below it, so a question quoted in the conversation is not
 * taken for a live one.
 */
const PROMPT_RULES: readonly { kind: PromptKind; question: RegExp; needsOptions: boolean }[] = [
  {
    kind: PromptKind.APPROVAL,
    question: /^\s*(Do you want to (?:proceed|make this edit to .+|create .+|allow Claude to .+|allow this .+)\?)\s*$/m,
    needsOptions: true,
  },
  { kind: PromptKind.PLAN, question: /^\s*(Would you like to proceed\?)\s*$/m, needsOptions: true },
  {
    kind: PromptKind.TRUST,
    question:
      /^\s*(Quick safety check: Is this a project you created or one you trust\?|Do you trust the files in this folder\?)/m,
    needsOptions: false,
  },
];

/** The selected first option of a numbered choice (`❯ 1. Yes`). */
const FIRST_OPTION = /^\s*[❯>]\s*1\.\s+\S/m;
/**
 * A spinner line: a glyph and a verb with `…` (2.1.332 draws `* Waddling…` first, then
 * `✻ Gallivanting… (3s · ↓ 6 tokens)`); a finished turn's `✻ Worked for 9s` has no ellipsis.
 */
const SPINNER_LINE = /^\s*[✻✶✢✽✳·*] \S+…/;
/** A spinner line of older builds, anywhere on screen: with the interrupt hint or a timer. */
const SPINNER_WITH_HINT = /^\s*[✻✶✢✽✳·*]\s+\S[^\n]*…[^\n]*(to interrupt|\(\d+s)/m;
/** The footer while a turn runs: alone (older builds, also `ctrl+c`) or after the mode (`⏸ manual mode on · esc to interrupt`). */
const INTERRUPT_FOOTER = /(?:^\s*|· )(esc|ctrl\+c) to interrupt\b/m;
/** The rules around the input box. */
const INPUT_RULE = /^─{20,}\s*$/;
/** Lines above the input box where the spinner is drawn (a tip under it, a hint line beside). */
const SPINNER_SEARCH_LINES = 4;
/** Title glyphs while working (the title shows `✳` when idle and when asking). */
const WORKING_TITLE = /^[◐◑◒◓] /;

/** A visible question at the bottom of a Claude Code pane, if any. */
export function claudeScreenPrompt(screen: string): PromptSignal | undefined {
  for (const rule of PROMPT_RULES) {
    const match = rule.question.exec(screen);
    if (!match) continue;
    if (rule.needsOptions && !FIRST_OPTION.test(screen.slice(match.index))) continue;
    return { kind: rule.kind, text: (match[1] ?? match[0]).trim() };
  }
  return undefined;
}

/** True when the pane shows a running turn (spinner line or interrupt footer). */
export function claudeScreenWorking(screen: string): boolean {
  return SPINNER_WITH_HINT.test(screen) || INTERRUPT_FOOTER.test(screen) || spinnerAboveInput(screen);
}

/** A bare spinner line just above the input box (not a bullet in the conversation further up). */
function spinnerAboveInput(screen: string): boolean {
  const lines = screen.split("\n");
  let rules = 0;
  for (let i = lines.length - 1; i >= 0; i--) {
    if (!INPUT_RULE.test(lines[i] ?? "")) continue;
    rules++;
    if (rules < 2) continue;
    // The upper rule of the input box: the spinner sits in the few non-blank lines above it.
    return lines
      .slice(0, i)
      .filter((l) => l.trim() !== "")
      .slice(-SPINNER_SEARCH_LINES)
      .some((l) => SPINNER_LINE.test(l));
  }
  return false;
}

/** True when the pane title says a turn is running. */
export function claudeTitleWorking(title: string): boolean {
  return WORKING_TITLE.test(title);
}
