/** The keys of the quick-key bar and the bytes a terminal sends for them (xterm conventions). */
export const QUICK_KEYS = {
  Esc: "\x1b",
  Tab: "\t",
  "Ctrl-C": "\x03",
  "Ctrl-D": "\x04",
  Up: "\x1b[A",
  Down: "\x1b[B",
  Right: "\x1b[C",
  Left: "\x1b[D",
  Enter: "\r",
} as const;

/** A quick key's name. */
export type QuickKey = keyof typeof QUICK_KEYS;

/**
 * What a typed key becomes while the sticky Ctrl of the quick-key bar is on: letters and `@[\]^_`
 * become their control codes (Ctrl-A is 0x01, ...), `?` becomes DEL; anything else is sent as typed.
 */
export function withCtrl(data: string): string {
  if (data.length !== 1) return data;
  const code = data.toUpperCase().charCodeAt(0);
  if (code >= 0x40 && code <= 0x5f) return String.fromCharCode(code - 0x40);
  if (data === "?") return "\x7f";
  if (data === " ") return "\x00";
  return data;
}
