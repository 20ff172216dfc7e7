/** Characters of a reply's last line kept for the list and the notification. */
export const REPLY_EXCERPT_CHARS = 160;

/** Lines that are Markdown structure rather than words: fences, rules, table delimiters. */
const STRUCTURE_LINE = /^\s*(?:`{3,}.*|~{3,}.*|[-*_]{3,}|\|?[\s:|-]+\|[\s:|-]*)$/;

/**
 * The last line of an agent's reply that says something, as one line of plain words: the line people
 * read to know how a turn ended ("All 12 tests pass.") without opening the session. Markdown marks
 * (list bullets, headings, emphasis, inline code ticks, link targets) are left out, white space and
 * control characters become single spaces, and it is cut to REPLY_EXCERPT_CHARS with an ellipsis.
 */
export function replyExcerpt(reply: string): string {
  const lines = reply.split("\n").filter((l) => l.trim() !== "" && !STRUCTURE_LINE.test(l));
  const last = lines.at(-1) ?? "";
  const plain = last
    .replace(/^\s*(?:#{1,6}\s+|>\s*|[-*+]\s+|\d+[.)]\s+)/, "")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/(\*\*|__|`)/g, "")
    .replace(/[\p{Cc}\s]+/gu, " ")
    .trim();
  return plain.length <= REPLY_EXCERPT_CHARS ? plain : `${plain.slice(0, REPLY_EXCERPT_CHARS - 1).trimEnd()}…`;
}
