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

/** What the terminal's own shortcuts do. */
export interface TerminalKeyActions {
  /** Ctrl+]: the focus leaves the terminal. */
  leave(): void;
  /** Ctrl+Shift+C: the selection to copy ("" when nothing is selected). */
  selection(): string;
  copy(text: string): void;
  /** Shift+PageUp: scrolling back a page. */
  pageUp(): void;
}

/**
 * Keys the terminal does not send to the program: Ctrl+] leaves the terminal, Ctrl+Shift+C copies the
 * selection, Ctrl+Shift+V is left to the browser's paste. Returns false for a key xterm must not handle
 * (xterm's custom key handler convention).
 */
export function handleTerminalKey(e: KeyboardEvent, actions: TerminalKeyActions): boolean {
  if (e.type !== "keydown") return true;
  if (e.ctrlKey && !e.shiftKey && !e.altKey && (e.key === "]" || e.code === "BracketRight")) {
    e.preventDefault();
    actions.leave();
    return false;
  }
  if (e.ctrlKey && e.shiftKey && (e.key === "C" || e.key === "c")) {
    const selection = actions.selection();
    if (selection !== "") {
      e.preventDefault();
      actions.copy(selection);
    }
    return false;
  }
  if (e.ctrlKey && e.shiftKey && (e.key === "V" || e.key === "v")) return false;
  if (e.shiftKey && e.key === "PageUp") actions.pageUp();
  return true;
}
