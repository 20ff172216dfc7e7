/**
 * The type of a file from its first bytes, not its name alone: a name can claim anything, and the
 * dashboard shows text as text and images as images only when the bytes are what they claim.
 */

/** The mime type of bytes that are neither text nor an image the dashboard shows. */
export const BINARY_MIME = "application/octet-stream";
/** UTF-8 text. */
export const TEXT_MIME = "text/plain; charset=utf-8";
/** UTF-8 text whose name says Markdown. */
export const MARKDOWN_MIME = "text/markdown; charset=utf-8";

/** Bytes sniffed for a type (git's own binary test reads the same first 8000 bytes for NUL). */
export const SNIFF_BYTES = 8000;

const IMAGES: ReadonlyArray<{ mime: string; test: (b: Buffer) => boolean }> = [
  {
    mime: "image/png",
    test: (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  },
  { mime: "image/jpeg", test: (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  { mime: "image/gif", test: (b) => /^GIF8[79]a/.test(b.subarray(0, 6).toString("latin1")) },
  {
    mime: "image/webp",
    test: (b) => b.subarray(0, 4).toString("latin1") === "RIFF" && b.subarray(8, 12).toString("latin1") === "WEBP",
  },
];

/** The image type of `head`, or undefined. SVG is not an image here: it is a script-capable document. */
export function sniffImage(head: Buffer): string | undefined {
  return IMAGES.find((i) => i.test(head))?.mime;
}

/**
 * True when `head` reads as UTF-8 text: no NUL, and valid UTF-8 except perhaps a character cut at the
 * end of the sample.
 */
export function looksText(head: Buffer, cutAtEnd: boolean): boolean {
  if (head.includes(0)) return false;
  let bytes = head;
  if (cutAtEnd) {
    // Drop a last character the sample cut in two (up to 3 continuation bytes and their lead byte).
    let end = bytes.length;
    for (let i = 1; i <= 3 && end - i >= 0; i++) {
      const b = bytes[end - i] ?? 0;
      if ((b & 0xc0) === 0x80) continue;
      if (b >= 0xc0) end -= i;
      break;
    }
    bytes = bytes.subarray(0, end);
  }
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** The type of a file from its first bytes (and, for text, whether its name says Markdown). */
export function sniffMime(head: Buffer, name: string, cutAtEnd: boolean): string {
  const image = sniffImage(head);
  if (image) return image;
  if (!looksText(head, cutAtEnd)) return BINARY_MIME;
  return /\.(md|markdown)$/i.test(name) ? MARKDOWN_MIME : TEXT_MIME;
}
