import { diffWordsWithSpace } from "diff";

/** One line of a unified diff, with its line numbers in the old and new file. */
export interface DiffLine {
  readonly kind: "context" | "add" | "del";
  readonly text: string;
  readonly oldNo?: number;
  readonly newNo?: number;
}

/** One hunk: its `@@` header and lines. */
export interface Hunk {
  readonly header: string;
  readonly lines: DiffLine[];
}

/** A row of the side-by-side view: the old line on the left, the new one on the right. */
export interface SideRow {
  readonly left?: DiffLine;
  readonly right?: DiffLine;
}

/** A piece of a changed line: unchanged text, or the words that changed. */
export interface WordPart {
  readonly text: string;
  readonly changed: boolean;
}

/** Lines longer than this are not compared word by word (a minified file would take seconds). */
const MAX_WORD_DIFF_CHARS = 2_000;

/** Parses git's unified diff into hunks; the header lines (`diff --git`, `index`, ...) are left out. */
export function parseUnifiedDiff(text: string): Hunk[] {
  const hunks: Hunk[] = [];
  let hunk: Hunk | undefined;
  let oldNo = 0;
  let newNo = 0;
  for (const line of text.split("\n")) {
    const m = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (m) {
      hunk = { header: line, lines: [] };
      hunks.push(hunk);
      oldNo = Number(m[1]);
      newNo = Number(m[2]);
      continue;
    }
    if (!hunk) continue;
    if (line.startsWith("diff --git")) {
      hunk = undefined;
      continue;
    }
    if (line.startsWith("+")) hunk.lines.push({ kind: "add", text: line.slice(1), newNo: newNo++ });
    else if (line.startsWith("-")) hunk.lines.push({ kind: "del", text: line.slice(1), oldNo: oldNo++ });
    else if (line.startsWith(" "))
      hunk.lines.push({ kind: "context", text: line.slice(1), oldNo: oldNo++, newNo: newNo++ });
  }
  return hunks;
}

/** The rows of a hunk side by side: a run of removed lines pairs with the run of added lines after it. */
export function sideBySide(lines: readonly DiffLine[]): SideRow[] {
  const rows: SideRow[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] as DiffLine;
    if (line.kind === "context") {
      rows.push({ left: line, right: line });
      i++;
      continue;
    }
    const dels: DiffLine[] = [];
    const adds: DiffLine[] = [];
    while (i < lines.length && lines[i]?.kind === "del") dels.push(lines[i++] as DiffLine);
    while (i < lines.length && lines[i]?.kind === "add") adds.push(lines[i++] as DiffLine);
    for (let k = 0; k < Math.max(dels.length, adds.length); k++) rows.push({ left: dels[k], right: adds[k] });
  }
  return rows;
}

/**
 * The words that changed between a removed line and the added line paired with it: the old line's
 * parts (removed words marked) and the new line's (added words marked). Undefined for long lines.
 */
export function wordChanges(oldText: string, newText: string): { old: WordPart[]; new: WordPart[] } | undefined {
  if (oldText.length > MAX_WORD_DIFF_CHARS || newText.length > MAX_WORD_DIFF_CHARS) return undefined;
  const old: WordPart[] = [];
  const next: WordPart[] = [];
  for (const change of diffWordsWithSpace(oldText, newText)) {
    if (change.added) next.push({ text: change.value, changed: true });
    else if (change.removed) old.push({ text: change.value, changed: true });
    else {
      old.push({ text: change.value, changed: false });
      next.push({ text: change.value, changed: false });
    }
  }
  return { old, new: next };
}

/** For each line of a hunk, its word-level parts when it is one side of a removed/added pair. */
export function pairedWords(lines: readonly DiffLine[]): Map<DiffLine, WordPart[]> {
  const out = new Map<DiffLine, WordPart[]>();
  for (const row of sideBySide(lines)) {
    if (row.left?.kind !== "del" || row.right?.kind !== "add") continue;
    const words = wordChanges(row.left.text, row.right.text);
    if (!words) continue;
    out.set(row.left, words.old);
    out.set(row.right, words.new);
  }
  return out;
}
