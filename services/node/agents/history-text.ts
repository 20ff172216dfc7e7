/**
 * Text helpers the native-log readers share: logs hold whole tool outputs and whatever a person
 * pasted, while a chat shows a short result and a bounded message.
 */

/** Lines of a tool's output kept as its chat text ("a short result"). */
export const MAX_RESULT_LINES = 12;
/** Characters of a tool's output kept as its chat text. */
export const MAX_RESULT_CHARS = 1500;
/** Characters kept of one message's text: bounds a page's size however much was pasted. */
export const MAX_MESSAGE_CHARS = 32 * 1024;

/** A tool's output cut to its first MAX_RESULT_LINES lines (and MAX_RESULT_CHARS), saying how much is left out. */
export function shortResult(output: string): string {
  const text = stripAnsi(output).replace(/\r\n?/g, "\n").replace(/\s+$/, "");
  const lines = text.split("\n");
  let kept = lines.slice(0, MAX_RESULT_LINES).join("\n");
  let cut = lines.length > MAX_RESULT_LINES;
  if (kept.length > MAX_RESULT_CHARS) {
    kept = kept.slice(0, MAX_RESULT_CHARS);
    cut = true;
  }
  if (!cut) return kept;
  const left = lines.length - kept.split("\n").length;
  return left > 0 ? `${kept}\n… +${left} lines` : `${kept}…`;
}

/** A message's text cut to MAX_MESSAGE_CHARS, saying so. */
export function capText(text: string): string {
  return text.length <= MAX_MESSAGE_CHARS
    ? text
    : `${text.slice(0, MAX_MESSAGE_CHARS)}… (cut: ${text.length} characters)`;
}

/** Text without terminal escape sequences (CLIs log some command output with colours). */
export function stripAnsi(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: escape sequences are what is removed.
  return text.replace(/\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g, "");
}

/** The bytes before a record's `type` value. */
const TYPE_KEY = Buffer.from('"type":"');
/** Longest `type` value looked at: record types are short words. */
const MAX_TYPE_CHARS = 64;

/**
 * A `"type":"…"` value of a JSONL line without parsing it (the first, second or last one in the
 * line): readers skip large records whose type says they are not conversation (request dumps,
 * attachments, instructions) before paying for JSON.parse. JSON strings escape their quotes, so the
 * pattern only ever matches a real key. "" when there is no such value.
 */
export function typeValue(line: Buffer, which: "first" | "second" | "last"): string {
  let at = which === "last" ? line.lastIndexOf(TYPE_KEY) : line.indexOf(TYPE_KEY);
  if (which === "second" && at >= 0) at = line.indexOf(TYPE_KEY, at + TYPE_KEY.length);
  if (at < 0) return "";
  const from = at + TYPE_KEY.length;
  const end = line.indexOf(0x22, from);
  return end < 0 || end - from > MAX_TYPE_CHARS ? "" : line.toString("latin1", from, end);
}
