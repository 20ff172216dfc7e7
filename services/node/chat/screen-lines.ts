/**
 * Small text helpers the chat parsers share. Screens are captured as plain text (`capture-pane -p -J`),
 * so every parser needs the same clean-up: trailing padding, rules, box edges, indentation.
 */

/** Shortest run of rule characters that counts as a drawn rule rather than text (`---` in prose). */
const MIN_RULE_LENGTH = 8;

const RULE = new RegExp(`^\\s*[─━═╌┄-]{${MIN_RULE_LENGTH},}\\s*$`);

/**
 * Lines as parsers want them: trailing spaces removed (`-J` keeps the padding TUIs draw), non-breaking
 * spaces made plain, tabs expanded to the next stop of 8 so indentation can be compared.
 */
export function cleanLines(lines: readonly string[]): string[] {
  return lines.map((line) => expandTabs(line.replace(/\u00a0/g, " ")).trimEnd());
}

function expandTabs(line: string): string {
  if (!line.includes("\t")) return line;
  let out = "";
  for (const ch of line) {
    if (ch === "\t") out += " ".repeat(8 - (out.length % 8));
    else out += ch;
  }
  return out;
}

/** True for a line that is only a horizontal rule (`────────`), which TUIs draw around input boxes. */
export function isRule(line: string): boolean {
  return RULE.test(line);
}

/** True for a line drawn as part of a box (`╭──╮`, `│ … │`, `╰──╯`, or their square forms). */
export function isBoxLine(line: string): boolean {
  return /^\s*[╭╰│┌└├╮╯┐┘]/.test(line);
}

/** True for a blank line. */
export function isBlank(line: string): boolean {
  return line.trim() === "";
}

/** Number of leading spaces. */
export function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

/** Removes up to `width` leading spaces from each line (fewer where the line has fewer). */
export function dedent(lines: readonly string[], width: number): string[] {
  return lines.map((line) => line.slice(Math.min(width, indentOf(line))));
}

/**
 * The lines as one message text: blank lines at either end dropped, runs of blank lines inside
 * collapsed to one, common indentation removed.
 */
export function joinText(lines: readonly string[]): string {
  let start = 0;
  let end = lines.length;
  while (start < end && isBlank(lines[start] ?? "")) start++;
  while (end > start && isBlank(lines[end - 1] ?? "")) end--;
  const kept: string[] = [];
  for (const line of lines.slice(start, end)) {
    if (isBlank(line) && isBlank(kept[kept.length - 1] ?? "x")) continue;
    kept.push(isBlank(line) ? "" : line);
  }
  const common = Math.min(...kept.filter((l) => l !== "").map(indentOf));
  return dedent(kept, Number.isFinite(common) ? common : 0).join("\n");
}

/** True for a line drawn only with block elements: logos and banners, never conversation. */
export function isBlockArt(line: string): boolean {
  return /^[\s▀▄█▌▐░▒▓▘▝▖▗▚▞▙▛▜▟]+$/.test(line) && !isBlank(line);
}
