/**
 * Whether text a program in a pane copies with OSC 52 may reach the browser's clipboard. A pane runs
 * whatever its program prints (a `cat` of a hostile file, an agent's output), so the first write of each
 * session asks the person, showing what would be copied; their answer is remembered for that session.
 * Pure: the choices live in a store the caller gives (localStorage in the page).
 */

/** A person's answer for one session. */
export type Osc52Choice = "allow" | "deny";

/** What to do with one OSC 52 write. */
export type Osc52Decision = "copy" | "ask" | "drop";

/** Where choices are kept, per session. */
export interface Osc52ChoiceStore {
  get(session: string): Osc52Choice | undefined;
  set(session: string, choice: Osc52Choice): void;
}

/** Characters of the text shown in the question; the rest is summarised by its length. */
export const OSC52_PREVIEW_CHARS = 200;
/** Lines of the text shown in the question. */
const OSC52_PREVIEW_LINES = 6;

/** What one OSC 52 write of `session` should do, given the choices remembered so far. */
export function osc52Decision(session: string, store: Osc52ChoiceStore): Osc52Decision {
  const choice = store.get(session);
  if (choice === "allow") return "copy";
  if (choice === "deny") return "drop";
  return "ask";
}

/**
 * The part of `text` the question shows: its first lines and characters, and how much more there
 * is, so a person sees what they allow (a command line, a URL) without a page of it.
 */
export function osc52Preview(text: string): { readonly shown: string; readonly more: number } {
  const lines = text.split("\n");
  let shown = lines.slice(0, OSC52_PREVIEW_LINES).join("\n");
  if (shown.length > OSC52_PREVIEW_CHARS) shown = shown.slice(0, OSC52_PREVIEW_CHARS);
  return { shown, more: text.length - shown.length };
}

/** Key prefix of the choices in localStorage. */
const STORAGE_PREFIX = "staragent.osc52.";

/** Choices kept in `storage` (the page's localStorage), per session; a refused storage remembers nothing. */
export function storageChoices(storage: Pick<Storage, "getItem" | "setItem">): Osc52ChoiceStore {
  return {
    get: (session) => {
      try {
        const value = storage.getItem(STORAGE_PREFIX + session);
        return value === "allow" || value === "deny" ? value : undefined;
      } catch {
        return undefined;
      }
    },
    set: (session, choice) => {
      try {
        storage.setItem(STORAGE_PREFIX + session, choice);
      } catch {
        // Storage refused (a private window's quota): the person is asked again next time.
      }
    },
  };
}
