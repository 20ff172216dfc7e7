import type { Route } from "./routes.js";

/** The dashboard's single-key shortcuts. */
export type Shortcut = "search" | "new-session";

/** What decides whether a key press is a shortcut. */
export interface KeyContext {
  readonly key: string;
  /** Ctrl, Meta or Alt held: the key belongs to the browser or the system. */
  readonly modified: boolean;
  /** The key went to a field, a terminal or a dialog. */
  readonly inField: boolean;
  readonly route: Route;
  readonly loggedIn: boolean;
}

/**
 * The shortcut a key press means, or undefined. A single letter never fires while a terminal could
 * have meant it: on a session's page (its terminal or composer is where typing goes, even when a
 * reload left the focus on the page) letters are the person's text, so `n` of `nvim` does not open
 * "New session" and let the rest of the word name it. `/` (search) only where the list is the page.
 */
export function shortcutFor(e: KeyContext): Shortcut | undefined {
  if (e.modified || e.inField || !e.loggedIn) return undefined;
  if (e.route.page === "sessions" && e.route.session !== undefined) return undefined;
  if (e.key === "/") return "search";
  if (e.key === "n") return "new-session";
  return undefined;
}
