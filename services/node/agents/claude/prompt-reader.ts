import { PromptEffect, PromptKind } from "../../../../gen/staragent/v1/session_pb.js";
import type { JsonRecord } from "../log-follower.js";
import { approvalEffect, numberedOptions, type ScreenChoice, type ScreenPrompt } from "../prompt.js";
import { arrayField, objects, stringField } from "../record-fields.js";
import type { PendingTool } from "./transcript.js";

/** Claude Code's question lines (2.0.x to 2.1.332: the prompt fixtures, docs/approvals.md), by kind. */
const QUESTION_RULES: readonly { kind: PromptKind; pattern: RegExp }[] = [
  {
    kind: PromptKind.APPROVAL,
    pattern: /^\s*(Do you want to (?:proceed|make this edit to .+|create .+|allow Claude to .+|allow this .+)\?)\s*$/,
  },
  { kind: PromptKind.PLAN, pattern: /^\s*(Would you like to proceed\?)\s*$/ },
  {
    kind: PromptKind.TRUST,
    pattern:
      /^\s*(Quick safety check: Is this a project you created or one you trust\?|Do you trust the files in this folder\?)/,
  },
];
/** The full-width rule above a prompt box (`────`). */
const BOX_RULE = /^─{20,}\s*$/;
/** The dashed rule around a command or diff in the box (`╌╌╌╌`, 2.1.x). */
const DASHED_RULE = /^\s*╌{10,}\s*$/;
/** A box's header line naming the tool ("Bash command", "Edit file", "Fetch"...). */
const TOOL_HEADER = /^\s(\S.*?)\s*$/;
/** A hint line the box may carry that is not part of what is asked about. */
const HINT_LINE = /^\s*Tip:/;
/** A diff line as the box draws it: its line number, then `+`, `-` or a space, then the text. */
const SCREEN_DIFF_LINE = /^\s*\d+\s([+\- ])\s?(.*)$/;
/** A numbered line of a new file's content as a Write prompt draws it: `  1 first line`. */
const NUMBERED_LINE = /^\s*\d+ (.*)$/;
/** The option label of a question's free-text answer. */
const FREE_TEXT_OPTION = /^(Type something|Other)\b/i;

/**
 * Reads a Claude Code prompt from its whole visible screen (ANSI stripped) and, where the transcript
 * has the pending tool call, the whole subject from it: the command, the edit as a diff, the URL, the
 * plan or question text. Undefined when no prompt with its options is on screen.
 */
export function readClaudePrompt(
  screen: string,
  pending: readonly PendingTool[] = [],
  askedHint = "",
): ScreenPrompt | undefined {
  const lines = screen.split("\n");
  const tool = pending[pending.length - 1];
  const asked = tool?.name === "AskUserQuestion" ? firstQuestion(tool.input) : askedHint;
  const found = findQuestion(lines, asked);
  if (!found) return undefined;
  const options = numberedOptions(lines.slice(found.line + 1));
  if (options.length === 0) return undefined;
  const kind = found.kind;
  const described = tool?.name === "AskUserQuestion" ? firstQuestionOptions(tool.input) : [];
  const choices: ScreenChoice[] = options.map((o) => {
    const label = withoutDescription(o.label, described);
    const effect = kind === PromptKind.QUESTION ? PromptEffect.ANSWER : planOrApprovalEffect(kind, label);
    const takesText =
      effect === PromptEffect.TELL_INSTEAD || (kind === PromptKind.QUESTION && FREE_TEXT_OPTION.test(label));
    return { id: `${o.number}`, label, effect, keys: [`${o.number}`], ...(takesText ? { takesText } : {}) };
  });
  const box =
    kind === PromptKind.TRUST
      ? { lines: lines.slice(found.line, found.line + 1 + (options[0]?.line ?? 0)), width: 0, cut: false }
      : boxAbove(lines, found.line);
  const fromScreen = screenSubject(box.lines, kind, box.width, box.cut);
  const fromLog = tool && toolFits(tool, kind, fromScreen) ? logSubject(tool) : undefined;
  const subject = fromLog ?? fromScreen;
  // The fingerprint's basis is what the screen alone shows (the labels as drawn), so a read with the
  // transcript's pending call (the status) and one without it (AnswerPrompt's) agree.
  const basis = [
    `${kind}`,
    found.question,
    JSON.stringify(fromScreen),
    ...options.map((o) => `${o.number}:${o.label}`),
  ];
  return {
    kind,
    question: found.question,
    ...subject,
    truncated: fromLog ? false : box.cut || fromScreen.truncated === true,
    choices,
    basis,
  };
}

/** The question line, lowest on screen: one of the rules, or `asked` (an AskUserQuestion's question) as drawn. */
function findQuestion(
  lines: readonly string[],
  asked: string,
): { kind: PromptKind; question: string; line: number } | undefined {
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i] ?? "";
    for (const rule of QUESTION_RULES) {
      const match = rule.pattern.exec(line);
      if (match) return { kind: rule.kind, question: (match[1] ?? "").trim(), line: i };
    }
    if (asked !== "" && line.trim() === asked) return { kind: PromptKind.QUESTION, question: asked, line: i };
  }
  return undefined;
}

/** Effects of a plan's options ("Yes, and auto-accept edits", "No, keep planning") and an approval's. */
function planOrApprovalEffect(kind: PromptKind, label: string): PromptEffect {
  if (kind === PromptKind.PLAN && /auto-accept/i.test(label)) return PromptEffect.ALLOW_ALWAYS;
  return approvalEffect(label);
}

/** The box's lines between its rule and the question; `cut` when the rule is off screen. */
function boxAbove(lines: readonly string[], questionLine: number): { lines: string[]; width: number; cut: boolean } {
  for (let i = questionLine - 1; i >= 0; i--) {
    const line = lines[i] ?? "";
    if (BOX_RULE.test(line))
      return { lines: lines.slice(i + 1, questionLine), width: line.trimEnd().length, cut: false };
  }
  return { lines: lines.slice(0, questionLine), width: 0, cut: true };
}

/** A URL on a fetch prompt's line. */
const URL_TEXT = /\bhttps?:\/\/\S+/;

/** What the box shows it is about, from the screen alone. */
function screenSubject(
  box: readonly string[],
  kind: PromptKind,
  width: number,
  cut: boolean,
): Pick<ScreenPrompt, "command" | "filePath" | "url" | "detail" | "truncated"> {
  const content = box.filter((l) => !HINT_LINE.test(l));
  while (content.length > 0 && (content[content.length - 1] ?? "").trim() === "") content.pop();
  if (kind !== PromptKind.APPROVAL) {
    const detail = content
      .map((l) => l.trim())
      .filter((l) => l !== "")
      .join("\n");
    return detail === "" ? {} : { detail };
  }
  if (cut) {
    // The box's top (its tool name, the command's start) is off screen: what shows is only part of it.
    const detail = content
      .map((l) => l.trim())
      .filter((l) => l !== "")
      .join("\n");
    return { detail, truncated: true };
  }
  const header = TOOL_HEADER.exec(content[0] ?? "")?.[1] ?? "";
  const rest = content.slice(1);
  // A line as wide as the pane was wrapped by it: the screen alone cannot say where it ends.
  const wrapped = width > 0 && rest.some((l) => !DASHED_RULE.test(l) && l.trimEnd().length >= width - 1);
  const dashed = rest.map((l, i) => (DASHED_RULE.test(l) ? i : -1)).filter((i) => i >= 0);
  let body: string[];
  let others: string[];
  if (dashed.length >= 2) {
    // 2.1.332: the command (or the diff) between two dashed rules, the description above them.
    body = rest.slice((dashed[0] ?? 0) + 1, dashed[1]).map((l) => l.trim());
    others = rest.slice(0, dashed[0]).map((l) => l.trim());
  } else {
    // Older 2.1.x: the command on the first indented line, the description below it.
    const indented = rest.map((l) => l.trim()).filter((l) => l !== "");
    body = indented.slice(0, 1);
    others = indented.slice(1);
  }
  const detail = [header, ...others].filter((l) => l !== "").join("\n");
  const text = body.join(wrapped ? "" : "\n");
  const truncated = wrapped || undefined;
  if (/^fetch/i.test(header)) {
    // 2.1.332 shows `url: …` and `prompt: …` between the rules; older 2.1.x the URL alone.
    const url = body.map((l) => URL_TEXT.exec(l)?.[0]).find((u) => u !== undefined) ?? text.split(/\s/)[0] ?? "";
    const extra = body.filter((l) => l !== "" && !URL_TEXT.test(l));
    return { url, detail: [detail, ...extra].join("\n"), truncated };
  }
  if (/^(edit|write|create|update)/i.test(header)) {
    // The file's path above the edit, the edit between the dashed rules as numbered diff lines.
    // A new file (2.1.332 "Create file") is drawn as numbered lines without marks: all of them added.
    const created = /^create/i.test(header);
    const diff = created
      ? body
          .map((l) => NUMBERED_LINE.exec(l))
          .filter((m) => m !== null)
          .map((m) => `+${m[1]}`)
      : body
          .map((l) => SCREEN_DIFF_LINE.exec(l))
          .filter((m) => m !== null)
          .map((m) => `${m[1] === " " ? " " : m[1]}${m[2]}`);
    return {
      filePath: others[0] ?? "",
      ...(diff.length > 0 ? { diff: diff.join("\n") } : {}),
      detail: header,
      truncated,
    };
  }
  return { command: text, detail, truncated };
}

/**
 * True when the transcript's pending call is the one the screen asks about: its tool fits the
 * prompt's kind and what the screen shows of the subject (a screen read a moment before the call
 * reached the transcript, or after, must not be mixed with it).
 */
function toolFits(
  tool: PendingTool,
  kind: PromptKind,
  screen: Pick<ScreenPrompt, "command" | "filePath" | "url">,
): boolean {
  const input = tool.input;
  switch (tool.name) {
    case "AskUserQuestion":
      return kind === PromptKind.QUESTION;
    case "ExitPlanMode":
      return kind === PromptKind.PLAN;
    case "Bash":
      return (
        kind === PromptKind.APPROVAL &&
        screen.command !== undefined &&
        fitsWithin(screen.command, stringField(input, "command"))
      );
    case "Edit":
    case "MultiEdit":
    case "Write":
      return (
        kind === PromptKind.APPROVAL &&
        screen.filePath !== undefined &&
        stringField(input, "file_path").endsWith(screen.filePath)
      );
    case "WebFetch":
      return (
        kind === PromptKind.APPROVAL && screen.url !== undefined && fitsWithin(screen.url, stringField(input, "url"))
      );
    default:
      return false;
  }
}

/** True when every non-blank piece the screen shows of `whole` is in it (wrapped or cut on screen). */
function fitsWithin(shown: string, whole: string): boolean {
  const flat = whole.replace(/\s+/g, "");
  return shown.trim() !== "" && flat.includes(shown.replace(/\s+/g, "").slice(0, 200));
}

/** The whole subject from the transcript's pending tool call (its `tool_use` input, docs/approvals.md). */
function logSubject(
  tool: PendingTool,
): Pick<ScreenPrompt, "command" | "filePath" | "diff" | "url" | "detail"> | undefined {
  const input = tool.input;
  switch (tool.name) {
    case "Bash":
      return {
        command: stringField(input, "command"),
        detail: [tool.name, stringField(input, "description")].filter((s) => s).join("\n"),
      };
    case "Edit":
    case "MultiEdit":
    case "Write": {
      const filePath = stringField(input, "file_path");
      return { filePath, diff: editDiff(tool.name, filePath, input), detail: tool.name };
    }
    case "WebFetch":
      return {
        url: stringField(input, "url"),
        detail: [tool.name, stringField(input, "prompt")].filter((s) => s).join("\n"),
      };
    case "ExitPlanMode":
      return { detail: stringField(input, "plan") };
    case "AskUserQuestion": {
      const first = objects(arrayField(input, "questions"))[0];
      const options = objects(arrayField(first, "options"))
        .map((o) => [stringField(o, "label"), stringField(o, "description")].filter((s) => s).join(": "))
        .filter((s) => s);
      return { detail: [stringField(first, "question"), ...options].join("\n") };
    }
    default:
      return undefined;
  }
}

function firstQuestion(input: JsonRecord | undefined): string {
  return stringField(objects(arrayField(input, "questions"))[0], "question").trim();
}

/** The options of an AskUserQuestion call's first question: each label and its description. */
function firstQuestionOptions(input: JsonRecord | undefined): { label: string; description: string }[] {
  const first = objects(arrayField(input, "questions"))[0];
  return objects(arrayField(first, "options")).map((o) => ({
    label: stringField(o, "label"),
    description: stringField(o, "description"),
  }));
}

/**
 * An option's label without the description 2.1.332 draws on the line below it (which the option
 * reader joins to the label, as it does a label wrapped by the pane): the CLI's label, as the call
 * names it, when the drawn text is exactly that label and its description.
 */
function withoutDescription(drawn: string, options: readonly { label: string; description: string }[]): string {
  const flat = drawn.replace(/\s+/g, " ").trim();
  for (const o of options) {
    if (o.label !== "" && o.description !== "" && flat === `${o.label} ${o.description}`.replace(/\s+/g, " ").trim())
      return o.label;
  }
  return drawn;
}

/** A fragment's lines: a final newline ends the last line rather than starting an empty one. */
function textLines(text: string): string[] {
  if (text === "") return [];
  return (text.endsWith("\n") ? text.slice(0, -1) : text).split("\n");
}

/**
 * The edit of an Edit, MultiEdit or Write call as unified diff text: each replaced fragment as one
 * hunk of removed then added lines (the transcript has the fragments, not their line numbers, so each
 * hunk counts from line 1 of its fragment); a Write as the whole new content added.
 */
export function editDiff(name: string, filePath: string, input: JsonRecord | undefined): string {
  const edits =
    name === "Write"
      ? [{ before: "", after: stringField(input, "content") }]
      : name === "MultiEdit"
        ? objects(arrayField(input, "edits")).map((e) => ({
            before: stringField(e, "old_string"),
            after: stringField(e, "new_string"),
          }))
        : [{ before: stringField(input, "old_string"), after: stringField(input, "new_string") }];
  const out = [`--- ${name === "Write" ? "/dev/null" : filePath}`, `+++ ${filePath}`];
  for (const edit of edits) {
    const removed = textLines(edit.before);
    const added = textLines(edit.after);
    out.push(`@@ -${removed.length === 0 ? 0 : 1},${removed.length} +${added.length === 0 ? 0 : 1},${added.length} @@`);
    for (const line of removed) out.push(`-${line}`);
    for (const line of added) out.push(`+${line}`);
  }
  return out.join("\n");
}
