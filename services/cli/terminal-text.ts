/**
 * Text from outside (session and folder names, pane titles, transcripts, a Node's error text) made
 * safe to print into a terminal: a terminal obeys control characters, so an OSC sequence in a folder
 * name could retitle the window or write the clipboard (OSC 52), a CR or newline could overwrite or
 * forge a line, and a bidi control (RLO) could make text read backwards. Everything a terminal would
 * act on is shown as a visible escape instead; everything else is left as it is.
 */

/**
 * Bidi controls (Unicode's embeddings, overrides, isolates and marks): shown escaped, never applied.
 * The dashboard shows them the same way (web/src/util/visible-text.ts).
 */
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
/**
 * What is written escaped: C0 controls, DEL, C1 controls (U+0080 to U+009F: CSI and OSC in their
 * 8-bit forms), the Unicode line and paragraph separators and the bidi controls (all of which a
 * terminal acts on), and the invisible format characters that can hide text in plain sight: zero
 * width space, word joiner and the invisible operators, the deprecated format controls, the byte
 * order mark, the Mongolian vowel separator, the Hangul fillers, the interlinear annotation marks,
 * and the tag characters (which can spell out a whole hidden sentence after visible text). An emoji
 * flag's tag sequence (U+1F3F4, tags, U+E007F) is left whole: it is what tags are for. Zero width
 * joiner and non-joiner stay (emoji and several scripts need them), as do variation selectors.
 * The dashboard shows the same set as escapes (web/src/util/visible-text.ts).
 */
const UNSAFE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
  /\u{1f3f4}[\u{e0020}-\u{e007e}]+\u{e007f}|[\u0000-\u001f\u007f-\u009f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u200b\u2060-\u2064\u206a-\u206f\ufeff\u180e\u115f\u1160\u3164\uffa0\ufff9-\ufffb\u{e0000}-\u{e007f}]/gu;

/** How a few familiar controls are written; the others as `\xHH` or `\uHHHH`. */
const NAMED: Readonly<Record<string, string>> = { "\n": "\\n", "\r": "\\r", "\t": "\\t", "\x1b": "\\e" };

/**
 * `text` with every character a terminal would act on, and every invisible format character, shown
 * as a visible escape (`\e`, `\r`, `\x07`, `\u202e`, `\u200b`, `\u{e0041}`). With `lines`, newlines and tabs stay (multi-line text such as a chat message); without,
 * the text stays on one line (a table cell, a name).
 */
export function terminalSafe(text: string, options: { readonly lines?: boolean } = {}): string {
  return text.replace(UNSAFE, (c) => {
    if (c.length > 2) return c; // an emoji flag's tag sequence
    if (options.lines && (c === "\n" || c === "\t")) return c;
    const named = NAMED[c];
    if (named) return named;
    const code = c.codePointAt(0) ?? 0;
    if (code <= 0xff) return `\\x${code.toString(16).padStart(2, "0")}`;
    return code <= 0xffff ? `\\u${code.toString(16).padStart(4, "0")}` : `\\u{${code.toString(16)}}`;
  });
}

/** True when `text` holds a bidi control (tests, and callers that want to say so). */
export function hasBidiControl(text: string): boolean {
  return BIDI_CONTROLS.test(text);
}

/**
 * Makes everything later written to `stream` terminal-safe (newlines and tabs kept): the one place the
 * `staragent` client commands' output passes through, so no command (present or future) can print
 * untrusted text raw. Not for `--json` (JSON's own escaping applies) or `attach` (a terminal's bytes).
 */
export function guardTerminalOutput(stream: NodeJS.WriteStream): void {
  const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
  stream.write = ((chunk: unknown, ...rest: unknown[]) => {
    const text = typeof chunk === "string" ? chunk : Buffer.isBuffer(chunk) ? chunk.toString("utf8") : undefined;
    if (text === undefined) return write(chunk, ...rest);
    // A string written with an encoding other than UTF-8 is decoded as such first.
    const encoding = typeof rest[0] === "string" ? (rest[0] as BufferEncoding) : undefined;
    const decoded =
      typeof chunk === "string" && encoding && encoding !== "utf8"
        ? Buffer.from(chunk, encoding).toString("utf8")
        : text;
    return write(terminalSafe(decoded, { lines: true }), ...(encoding ? rest.slice(1) : rest));
  }) as typeof stream.write;
}
