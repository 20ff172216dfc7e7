/** The colour theme: the system's, or one chosen. */
export type ThemeChoice = "system" | "light" | "dark";

/** What a person chose in this browser (kept in localStorage, nothing on the Hub). */
export interface Preferences {
  readonly theme: ThemeChoice;
  /** Browser notifications when a session enters review (also needs the browser's permission). */
  readonly notify: boolean;
  /** xterm.js screen-reader mode: terminal output read out through a live region. */
  readonly screenReader: boolean;
}

const KEY = "staragent.preferences";
const DEFAULTS: Preferences = { theme: "system", notify: false, screenReader: false };

/** The saved preferences (defaults for anything missing or unreadable). */
export function loadPreferences(): Preferences {
  try {
    const raw = localStorage.getItem(KEY);
    const parsed = raw ? (JSON.parse(raw) as Partial<Preferences>) : {};
    return {
      theme: parsed.theme === "light" || parsed.theme === "dark" ? parsed.theme : "system",
      notify: parsed.notify === true,
      screenReader: parsed.screenReader === true,
    };
  } catch {
    return DEFAULTS;
  }
}

/** Saves preferences (a full or private-mode storage only loses the choice, never breaks the page). */
export function savePreferences(p: Preferences): void {
  try {
    localStorage.setItem(KEY, JSON.stringify(p));
  } catch {
    // Storage unavailable: the choice lasts for this page only.
  }
}

/** The theme actually shown for a choice. */
export function effectiveTheme(choice: ThemeChoice): "light" | "dark" {
  if (choice !== "system") return choice;
  return matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}
