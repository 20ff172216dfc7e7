import { terminalSafe } from "./terminal-text.js";

/** Rows of cells as lines, each column padded to its widest cell (the last one left as it is). */
export function alignColumns(unsafe: readonly (readonly string[])[]): string {
  // One line per row, whatever a cell holds: a newline in a folder name cannot forge a row.
  const rows = unsafe.map((r) => r.map((cell) => terminalSafe(cell)));
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? [];
  return rows
    .map((r) =>
      r
        .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}
