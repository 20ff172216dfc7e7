import type { Terminal } from "@xterm/xterm";

/** Every line of the terminal's buffer (scrollback and screen) as text (tests and troubleshooting). */
export function bufferText(term: Terminal | undefined): string {
  const buffer = term?.buffer.active;
  if (!buffer) return "";
  const lines: string[] = [];
  for (let i = 0; i < buffer.length; i++) lines.push(buffer.getLine(i)?.translateToString(true) ?? "");
  return lines.join("\n");
}

/** How many lines above the bottom the view is scrolled (0: following the output). */
export function linesScrolledBack(term: Terminal | undefined): number {
  const buffer = term?.buffer.active;
  return buffer ? buffer.baseY - buffer.viewportY : 0;
}
