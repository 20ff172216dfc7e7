import { type IDisposable, Terminal } from "@xterm/xterm";
import { copyToClipboard } from "./clipboard.js";
import { handleTerminalKey, type TerminalKeyActions } from "./keys.js";
import { openSafeLink } from "./links.js";
import { MINIMUM_CONTRAST_RATIO, TERMINAL_THEMES } from "./terminal-themes.js";

/** Lines kept in the view's scrollback (the attach history fills part of it). */
const SCROLLBACK_LINES = 5_000;
/** Font size in pixels; smaller on narrow screens so a phone still shows a useful width. */
const FONT_SIZE = 13;
const NARROW_FONT_SIZE = 12;
/** Below this width (CSS pixels) the narrow font is used. */
const NARROW_WIDTH_PX = 520;

/**
 * An xterm.js terminal set up the way the dashboard shows sessions: the page's monospace font, a
 * smaller font on phones, a contrast floor for colours programs pick, Option as Meta on macOS, and
 * links that open only for http(s), in a new tab; the colours and screen-reader mode the preferences say.
 */
export function createTerminal(preferences: TerminalPreferences | undefined): Terminal {
  return new Terminal({
    allowProposedApi: false,
    convertEol: false,
    cursorBlink: false,
    fontFamily: getComputedStyle(document.documentElement).getPropertyValue("--mono").trim() || "monospace",
    fontSize: window.innerWidth < NARROW_WIDTH_PX ? NARROW_FONT_SIZE : FONT_SIZE,
    scrollback: SCROLLBACK_LINES,
    minimumContrastRatio: MINIMUM_CONTRAST_RATIO,
    theme: TERMINAL_THEMES[preferences?.theme ?? "light"],
    screenReaderMode: preferences?.value.screenReader ?? false,
    macOptionIsMeta: true,
    rightClickSelectsWord: false,
    linkHandler: { activate: (_event, uri) => openSafeLink(uri), allowNonHttpProtocols: false },
  });
}

/** What a terminal follows of the page's preferences (the PreferencesStore). */
export interface TerminalPreferences {
  readonly theme: "light" | "dark";
  readonly value: { readonly screenReader: boolean };
  subscribe(listener: () => void): () => void;
}

/** Keeps the terminal's colours and screen-reader mode on the preferences as they change. */
export function followPreferences(term: Terminal, preferences: TerminalPreferences): IDisposable {
  return {
    dispose: preferences.subscribe(() => {
      term.options.theme = TERMINAL_THEMES[preferences.theme];
      term.options.screenReaderMode = preferences.value.screenReader;
    }),
  };
}

/** Sends the terminal's keys through handleTerminalKey, Ctrl+Shift+C copying its selection. */
export function attachTerminalKeys(term: Terminal, actions: Pick<TerminalKeyActions, "leave" | "pageUp">): void {
  term.attachCustomKeyEventHandler((e) =>
    handleTerminalKey(e, {
      ...actions,
      selection: () => term.getSelection(),
      copy: (text) => void copyToClipboard(text),
    }),
  );
}
