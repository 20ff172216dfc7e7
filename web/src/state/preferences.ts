import * as v from "valibot";
import { DEFAULT_LIST_VIEW, parseListView } from "./list-view.js";
import type { Subscribable } from "./store-controller.js";

/**
 * What a person chose in this browser (kept in localStorage, nothing on the Hub), as a schema: a
 * field that is missing or of the wrong kind falls back to its default alone, so one bad field never
 * loses the others. The types below are inferred from it.
 */
const PreferencesSchema = v.object({
  /** The colour theme: the system's, or one chosen. */
  theme: v.fallback(v.picklist(["system", "light", "dark"]), "system"),
  /** Browser notifications when a session enters review (also needs the browser's permission). */
  notify: v.fallback(v.boolean(), false),
  /** xterm.js screen-reader mode: terminal output read out through a live region. */
  screenReader: v.fallback(v.boolean(), false),
  /** How the session list is laid out (density, order, groups, shells); read field by field. */
  list: v.fallback(v.pipe(v.unknown(), v.transform(parseListView)), DEFAULT_LIST_VIEW),
});

/** What a person chose in this browser (kept in localStorage, nothing on the Hub). */
export type Preferences = Readonly<v.InferOutput<typeof PreferencesSchema>>;

/** The colour theme: the system's, or one chosen. */
export type ThemeChoice = Preferences["theme"];

/** The localStorage key of the preferences. */
export const PREFERENCES_KEY = "staragent.preferences";
const DEFAULTS: Preferences = { theme: "system", notify: false, screenReader: false, list: DEFAULT_LIST_VIEW };

/** Where preferences are kept (localStorage; a test passes a Map-backed one). */
export type PreferenceStorage = Pick<Storage, "getItem" | "setItem">;

/** localStorage, or undefined where the browser refuses it (some private modes throw on access). */
export function browserStorage(): Storage | undefined {
  try {
    return localStorage;
  } catch {
    return undefined;
  }
}

/** Preferences from their stored text: defaults for anything missing, unreadable or of the wrong kind. */
export function parsePreferences(raw: string | null): Preferences {
  let parsed: unknown;
  try {
    parsed = raw ? JSON.parse(raw) : {};
  } catch {
    return DEFAULTS;
  }
  const result = v.safeParse(PreferencesSchema, parsed);
  return result.success ? result.output : DEFAULTS;
}

/** The theme actually shown for a choice, given whether the system prefers dark. */
export function effectiveTheme(choice: ThemeChoice, systemDark: boolean): "light" | "dark" {
  if (choice !== "system") return choice;
  return systemDark ? "dark" : "light";
}

/**
 * This browser's preferences, one store for the whole page: views read `value` and `theme` and
 * subscribe to changes (the terminal's colours and screen-reader mode follow at once). Saving never
 * breaks the page: full or private-mode storage only loses the choice for later visits. DOM-free.
 */
export class PreferencesStore implements Subscribable {
  private current: Preferences;
  private shownTheme: "light" | "dark";
  private readonly listeners = new Set<() => void>();

  /**
   * @param storage where the choice is kept, or undefined where storage is unavailable
   * @param systemDark whether the system prefers a dark scheme now
   */
  constructor(
    private readonly storage: PreferenceStorage | undefined,
    private readonly systemDark: () => boolean,
  ) {
    this.current = this.load();
    this.shownTheme = effectiveTheme(this.current.theme, systemDark());
  }

  /** The preferences now. */
  get value(): Preferences {
    return this.current;
  }

  /** The theme shown now (the system's when the choice is "system"). */
  get theme(): "light" | "dark" {
    return this.shownTheme;
  }

  /** Changes the preferences, saves them, and tells every subscriber. */
  set(next: Preferences): void {
    this.current = next;
    try {
      this.storage?.setItem(PREFERENCES_KEY, JSON.stringify(next));
    } catch {
      // Storage unavailable: the choice lasts for this page only.
    }
    this.shownTheme = effectiveTheme(next.theme, this.systemDark());
    this.notify();
  }

  /** Changes some preferences, keeping the others. */
  update(partial: Partial<Preferences>): void {
    this.set({ ...this.current, ...partial });
  }

  /** The system's colour scheme changed: subscribers hear of it when the shown theme follows it. */
  systemThemeChanged(): void {
    const theme = effectiveTheme(this.current.theme, this.systemDark());
    if (theme === this.shownTheme) return;
    this.shownTheme = theme;
    this.notify();
  }

  /** Calls `listener` after each change; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private load(): Preferences {
    try {
      return parsePreferences(this.storage?.getItem(PREFERENCES_KEY) ?? null);
    } catch {
      return DEFAULTS;
    }
  }

  private notify(): void {
    for (const l of this.listeners) l();
  }
}
