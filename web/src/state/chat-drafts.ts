/**
 * How long a message whose sending was interrupted by a reload is offered again: long enough to come
 * back after a crash or a dead battery, short enough not to resurrect something long settled.
 */
export const PENDING_SEND_TTL_MS = 15 * 60 * 1000;

const DRAFT_PREFIX = "staragent.draft:";
const PENDING_PREFIX = "staragent.sending:";

/**
 * Unsent chat text per session, kept in localStorage so a reload (or a crash) loses nothing: the draft
 * being typed, and a message whose SendChatMessage call had not answered when the page went away.
 */
export const chatDrafts = {
  draft(name: string): string {
    return read(DRAFT_PREFIX + name) ?? "";
  },
  setDraft(name: string, text: string): void {
    if (text === "") remove(DRAFT_PREFIX + name);
    else write(DRAFT_PREFIX + name, text);
  },
  /** A message that was being sent when the page went away, if recent. */
  pending(name: string, now = Date.now()): string | undefined {
    const raw = read(PENDING_PREFIX + name);
    if (!raw) return undefined;
    try {
      const p = JSON.parse(raw) as { text?: unknown; at?: unknown };
      if (typeof p.text === "string" && typeof p.at === "number" && now - p.at < PENDING_SEND_TTL_MS) return p.text;
    } catch {
      // Unreadable: dropped below.
    }
    remove(PENDING_PREFIX + name);
    return undefined;
  },
  setPending(name: string, text: string | undefined, now = Date.now()): void {
    if (text === undefined) remove(PENDING_PREFIX + name);
    else write(PENDING_PREFIX + name, JSON.stringify({ text, at: now }));
  },
};

function read(key: string): string | null {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

function write(key: string, value: string): void {
  try {
    localStorage.setItem(key, value);
  } catch {
    // Storage full or unavailable: the text stays in the composer for this page.
  }
}

function remove(key: string): void {
  try {
    localStorage.removeItem(key);
  } catch {
    // Nothing to do.
  }
}
