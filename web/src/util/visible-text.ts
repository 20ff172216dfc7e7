/**
 * Characters shown as visible escapes, never applied. The bidi controls (embeddings, overrides,
 * isolates and marks): in a name, a path or a chat message they reorder what a person reads
 * (`U+202E` makes `txt.exe` read `exe.txt`). The invisible format characters that can hide text in
 * plain sight: zero width space, word joiner and the invisible operators, the deprecated format
 * controls, the byte order mark, the Mongolian vowel separator, the Hangul fillers, the interlinear
 * annotation marks, and the tag characters (which can spell out a whole hidden instruction after
 * visible text). An emoji flag's tag sequence (U+1F3F4, tags, U+E007F) stays whole; zero width
 * joiner and non-joiner and the variation selectors stay (emoji and several scripts need them). The
 * `staragent` command escapes the same set (services/cli/terminal-text.ts).
 */
const HIDDEN =
  /\u{1f3f4}[\u{e0020}-\u{e007e}]+\u{e007f}|[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u200b\u2060-\u2064\u206a-\u206f\ufeff\u180e\u115f\u1160\u3164\uffa0\ufff9-\ufffb\u{e0000}-\u{e007f}]/gu;

/**
 * `text` with each bidi control and invisible format character shown as a visible escape (`\u202e`,
 * `\u200b`, `\u{e0041}`), for names, folders and chat text from outside. Display only: names sent
 * back to the Hub stay as they are.
 */
export function visibleText(text: string): string {
  return text.replace(HIDDEN, (c) => {
    if (c.length > 2) return c; // an emoji flag's tag sequence
    const code = c.codePointAt(0) ?? 0;
    return code <= 0xffff ? `\\u${code.toString(16).padStart(4, "0")}` : `\\u{${code.toString(16)}}`;
  });
}
