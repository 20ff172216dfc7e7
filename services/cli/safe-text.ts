/**
 * Text from a session's files (paths, diffs) printed to a person's terminal: untrusted, so every
 * control character that a terminal would act on (escape sequences, carriage returns that overwrite a
 * line, C1 controls, bidirectional overrides that reorder what is shown) is printed as an escape
 * (`\x1b`, `\u202e`) instead. Tabs stay; line breaks are the caller's to keep or escape.
 */

/** Controls a terminal acts on, and bidirectional formatting characters. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** `text` with every unsafe character shown escaped; `\n` kept when `keepNewlines`. */
export function safeText(text: string, keepNewlines = false): string {
  const escaped = text.replace(UNSAFE, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
  return keepNewlines ? escaped : escaped.replaceAll("\n", "\\n");
}
