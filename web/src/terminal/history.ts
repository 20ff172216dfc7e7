/**
 * The scrollback part of an attachment's history: `history` without its last `screenLines` lines,
 * which are the pane's screen at capture time and are redrawn by the live output (at the viewer's size,
 * which may differ). Lines end with CRLF.
 */
export function scrollbackPart(history: Uint8Array, screenLines: number): Uint8Array {
  if (screenLines <= 0) return history;
  let total = 0;
  for (const b of history) if (b === 0x0a) total++;
  const keep = total - screenLines;
  if (keep <= 0) return new Uint8Array(0);
  let seen = 0;
  for (let i = 0; i < history.length; i++) {
    if (history[i] === 0x0a && ++seen === keep) return history.subarray(0, i + 1);
  }
  return history;
}

/**
 * Line feeds that move every line written so far into the scrollback, leaving the screen empty for the
 * live redraw: after N lines, `rows - 1` more line feeds scroll exactly N lines off the screen.
 */
export function pushIntoScrollback(rows: number): string {
  return "\n".repeat(Math.max(0, rows - 1));
}

/** The two byte arrays one after the other. */
export function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}
