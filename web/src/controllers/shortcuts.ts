import type { ReactiveController, ReactiveControllerHost } from "lit";
import type { Route } from "../state/routes.js";
import { type Shortcut, shortcutFor } from "../state/shortcuts.js";

/** Where a key press counts as typing, never as a shortcut: fields, the terminal, a dialog. */
const TYPING_PLACES = "input, textarea, select, [contenteditable], .xterm, dialog";

/** What the shortcuts controller needs from the page. */
export interface ShortcutsOptions {
  readonly route: () => Route;
  readonly loggedIn: () => boolean;
  /** Carries the shortcut out; returns whether it did (the key's default is then prevented). */
  readonly run: (shortcut: Shortcut) => boolean;
  /** Where key presses are heard (the document; tests pass their own). */
  readonly events?: EventTarget;
}

/**
 * The dashboard's single-key shortcuts (`/` searches, `n` opens New session) while the host is
 * connected: which key means what is `shortcutFor`'s rule; this hears the keys and takes the one
 * that meant something, leaving every other key (and any a handler before it took) alone.
 */
export class ShortcutsController implements ReactiveController {
  constructor(
    host: ReactiveControllerHost,
    private readonly options: ShortcutsOptions,
  ) {
    host.addController(this);
  }

  hostConnected(): void {
    (this.options.events ?? document).addEventListener("keydown", this.onKey);
  }

  hostDisconnected(): void {
    (this.options.events ?? document).removeEventListener("keydown", this.onKey);
  }

  private readonly onKey = (event: Event): void => {
    const e = event as KeyboardEvent;
    if (e.defaultPrevented) return;
    const shortcut = shortcutFor({
      key: e.key,
      modified: e.ctrlKey || e.metaKey || e.altKey,
      inField: typingPlace(e.target),
      route: this.options.route(),
      loggedIn: this.options.loggedIn(),
    });
    if (shortcut !== undefined && this.options.run(shortcut)) e.preventDefault();
  };
}

/** Whether a key press went to a place where it is typing (an element inside one of TYPING_PLACES). */
function typingPlace(target: EventTarget | null): boolean {
  const closest = (target as Partial<Element> | null)?.closest;
  return typeof closest === "function" && closest.call(target, TYPING_PLACES) !== null;
}
