import { createHash } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import {
  type PendingPrompt,
  PendingPromptSchema,
  PromptEffect,
  type PromptKind,
} from "../../../gen/staragent/v1/session_pb.js";

/**
 * One choice of a prompt read off a CLI's screen: what the contract shows (`id`, `label`, `effect`)
 * and what only the owning machine needs, the tmux keys that pick it in that CLI.
 */
export interface ScreenChoice {
  readonly id: string;
  readonly label: string;
  readonly effect: PromptEffect;
  /** tmux `send-keys` key names that pick this choice (`3`, `y`, `Escape`, `Right Enter`...). */
  readonly keys: readonly string[];
  /** True when the CLI then waits for typed text (TELL_INSTEAD, a question's free-text option). */
  readonly takesText?: boolean;
}

/** A prompt as a CLI's prompt reader sees it: the contract's fields and the keys of each choice. */
export interface ScreenPrompt {
  readonly kind: PromptKind;
  readonly question: string;
  readonly command?: string;
  readonly filePath?: string;
  readonly diff?: string;
  readonly url?: string;
  readonly detail?: string;
  readonly truncated?: boolean;
  readonly choices: readonly ScreenChoice[];
  /**
   * What the fingerprint is taken from when it is not all of the above: the screen's part alone,
   * where a reader adds the whole subject from the native log, so that a fresh read of the screen at
   * answer time gives the same fingerprint without the log.
   */
  readonly basis?: readonly string[];
}

/** Hex digits of the fingerprint: 128 bits, so two different prompts never share one by chance. */
const FINGERPRINT_HEX = 32;

/**
 * The fingerprint of a prompt: a hash of everything that tells it from another (the CLI, its kind,
 * question, subject and the choices' words), and of nothing that moves while it stays on screen (the
 * selection marker, a blinking title, the time). Same prompt, same fingerprint; the same question
 * about another command, another one.
 */
export function promptFingerprint(cli: string, prompt: ScreenPrompt): string {
  const parts = prompt.basis
    ? [cli, ...prompt.basis]
    : [
        cli,
        prompt.kind,
        prompt.question,
        prompt.command ?? "",
        prompt.filePath ?? "",
        prompt.diff ?? "",
        prompt.url ?? "",
        prompt.detail ?? "",
        ...prompt.choices.map((c) => `${c.id}:${c.label}`),
      ];
  return createHash("sha256").update(JSON.stringify(parts)).digest("hex").slice(0, FINGERPRINT_HEX);
}

/** The contract's PendingPrompt for a prompt read from `cli`'s screen. */
export function toPendingPrompt(cli: string, prompt: ScreenPrompt): PendingPrompt {
  return create(PendingPromptSchema, {
    kind: prompt.kind,
    question: prompt.question,
    command: prompt.command ?? "",
    filePath: prompt.filePath ?? "",
    diff: prompt.diff ?? "",
    url: prompt.url ?? "",
    detail: prompt.detail ?? "",
    truncated: prompt.truncated ?? false,
    choices: prompt.choices.map((c) => ({ id: c.id, label: c.label, effect: c.effect })),
    fingerprint: promptFingerprint(cli, prompt),
  });
}

/**
 * What picking an approval's option does, from the CLI's own words for it (Claude Code, Codex and
 * opencode word them alike: "Yes", "Yes, and don't ask again …", "No, and tell … differently",
 * "Allow always", "Reject").
 */
export function approvalEffect(label: string): PromptEffect {
  if (/^no\b.*\btell\b/i.test(label)) return PromptEffect.TELL_INSTEAD;
  if (/^(no\b|reject|deny|cancel)/i.test(label)) return PromptEffect.DENY;
  if (/\b(always|don't ask again|do not ask again|auto mode|for this session|allow all)\b/i.test(label)) {
    return PromptEffect.ALLOW_ALWAYS;
  }
  if (/^(yes|allow|proceed|approve|trust)\b/i.test(label)) return PromptEffect.ALLOW_ONCE;
  return PromptEffect.UNSPECIFIED;
}

/** A numbered option line of a TUI menu: `❯ 1. Yes`, `  2. No, exit`, `› 1. Yes, proceed (y)`. */
export const NUMBERED_OPTION = /^\s*(?:[❯›>]\s*)?(\d{1,2})\.\s+(\S.*?)\s*$/;

/**
 * The numbered options from `lines` (consecutive, starting at 1), with the line each was on. A label
 * a narrow pane wrapped continues on the indented lines below it, up to the next option or a blank
 * line: it is joined back whole.
 */
export function numberedOptions(lines: readonly string[]): { number: number; label: string; line: number }[] {
  const options: { number: number; label: string; line: number }[] = [];
  let open = false;
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i] ?? "";
    const match = NUMBERED_OPTION.exec(text);
    const number = Number(match?.[1] ?? 0);
    if (match && number === options.length + 1) {
      options.push({ number, label: match[2] ?? "", line: i });
      open = true;
      continue;
    }
    const last = options[options.length - 1];
    if (last && open && /^\s{2,}\S/.test(text) && !match) {
      last.label = `${last.label} ${text.trim()}`;
      continue;
    }
    open = false;
    if (options.length > 0 && match) break;
  }
  return options;
}
