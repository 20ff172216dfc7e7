import { type PendingPrompt, PromptEffect, PromptKind } from "../../gen/staragent/v1/session_pb.js";
import { enumWord } from "./format.js";

/**
 * `text` from a pane with control characters (escape sequences, carriage returns, bells) shown as
 * `\xNN`: a prompt's words come from an agent and must not drive the user's terminal.
 */
export function printable(text: string): string {
  let out = "";
  for (const c of text) {
    const code = c.codePointAt(0) ?? 0;
    const control = (code < 0x20 && c !== "\t" && c !== "\n") || (code >= 0x7f && code <= 0x9f);
    out += control ? `\\x${code.toString(16).padStart(2, "0")}` : c;
  }
  return out;
}

/** What a prompt is about, in one line: the command, the file or the URL (or its detail's first line). */
export function promptSubject(p: PendingPrompt): string {
  const about = p.command || p.filePath || p.url || p.detail.split("\n")[0] || "";
  return printable(about.replace(/\n/g, " ⏎ "));
}

/** A prompt in full, for a person to read before answering it. */
export function describePrompt(p: PendingPrompt): string {
  const lines = [`${enumWord(PromptKind, p.kind)}: ${printable(p.question)}`];
  if (p.command) lines.push("command:", ...p.command.split("\n").map((l) => `    ${printable(l)}`));
  if (p.filePath) lines.push(`file: ${printable(p.filePath)}`);
  if (p.diff) lines.push("diff:", ...p.diff.split("\n").map((l) => `    ${printable(l)}`));
  if (p.url) lines.push(`url: ${printable(p.url)}`);
  if (p.detail) lines.push(...p.detail.split("\n").map((l) => `  ${printable(l)}`));
  if (p.truncated) lines.push("(the screen cut this prompt: what it is about may be incomplete)");
  lines.push("choices:");
  for (const c of p.choices) lines.push(`  ${c.id}) ${printable(c.label)}  [${enumWord(PromptEffect, c.effect)}]`);
  return lines.join("\n");
}
