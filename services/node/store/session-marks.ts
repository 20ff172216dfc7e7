import type { AdoptedSession, StateFiles } from "./state-files.js";

/**
 * The machine's marks on sessions, from its state files: which sessions were adopted (by their tmux
 * creation time, so a reused name is not) and which completion of each was seen. Each file is read
 * once and cached; every write through here drops the cache, so the next read sees it.
 */
export class SessionMarks {
  private adoptedCache: Map<string, number> | undefined;
  private seenCache: Map<string, string> | undefined;

  constructor(private readonly state: StateFiles) {}

  /** Adopted sessions: tmux name → the session's creation time (seconds) when it was adopted. */
  async adopted(): Promise<Map<string, number>> {
    if (!this.adoptedCache) {
      const file = await this.state.adopted.read();
      this.adoptedCache = new Map(file.sessions.map((s) => [s.tmuxSession, s.sessionCreated]));
    }
    return this.adoptedCache;
  }

  /** Seen completions: tmux name → the completion id marked seen. */
  async seen(): Promise<Map<string, string>> {
    if (!this.seenCache) {
      const file = await this.state.seen.read();
      this.seenCache = new Map(file.seen.map((e) => [e.tmuxSession, e.completionId]));
    }
    return this.seenCache;
  }

  /** Records (or replaces) the adoption of one session. */
  async adopt(entry: AdoptedSession): Promise<void> {
    await this.state.adopted.update((file) => ({
      ...file,
      sessions: [...file.sessions.filter((s) => s.tmuxSession !== entry.tmuxSession), entry],
    }));
    this.adoptedCache = undefined;
  }

  /** Removes a session's adoption record; returns it (to restore it if the stop fails), if any. */
  async forgetAdopted(tmuxName: string): Promise<AdoptedSession | undefined> {
    const adopted = await this.adopted();
    if (!adopted.has(tmuxName)) return undefined;
    let removed: AdoptedSession | undefined;
    await this.state.adopted.update((file) => {
      removed = file.sessions.find((s) => s.tmuxSession === tmuxName);
      return { ...file, sessions: file.sessions.filter((s) => s.tmuxSession !== tmuxName) };
    });
    this.adoptedCache = undefined;
    return removed;
  }

  /** Marks `completionId` of a session seen (replacing an older mark). */
  async markSeen(tmuxName: string, completionId: string): Promise<void> {
    await this.state.seen.update((file) => ({
      ...file,
      seen: [
        ...file.seen.filter((e) => e.tmuxSession !== tmuxName),
        { tmuxSession: tmuxName, completionId, seenTime: new Date().toISOString() },
      ],
    }));
    this.seenCache = undefined;
  }
}
