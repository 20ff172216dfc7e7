import type { TmuxClient } from "./client.js";
import type { PaneInfo } from "./panes.js";

/** How often tmux is nudged about one dead pane it has no exit status for, and how many times. */
const NUDGE_EVERY_MS = 1_000;
const NUDGES = 5;

/**
 * When each dead pane died, also for the dead panes tmux has no exit status for.
 *
 * tmux 3.3 marks a pane dead when its terminal closes, but learns the exit status (and sets
 * `pane_dead_time`) only when it reaps the process on SIGCHLD. A SIGCHLD that arrives while
 * libutempter has its own handler in place (tmux calls it as panes open and close) is lost: the
 * process stays a zombie and the pane dead without a status or a time, for good (tmux issue 311;
 * seen here when two panes ended at once on a loaded machine). A SIGCHLD sent to the tmux server
 * makes it reap whatever waits, and is harmless when nothing does; so such a pane's server is nudged
 * once a second, five times at most (a process that closed its terminal and ran on leaves its pane
 * without a status for good, however often tmux is nudged). Until tmux has a time of death, the pane
 * died when it was first seen dead.
 */
export class DeadPanes {
  private readonly pending = new Map<string, { readonly seenMs: number; nudgedMs: number; nudges: number }>();

  constructor(
    private readonly nudge: (paneId: string) => Promise<void>,
    private readonly now: () => number = Date.now,
  ) {}

  /** When a dead pane died, in whole seconds: tmux's time, else when it was first seen dead. */
  async diedAt(pane: PaneInfo): Promise<number> {
    if (pane.deadTime !== undefined && pane.deadStatus !== undefined) {
      this.pending.delete(pane.paneId);
      return pane.deadTime;
    }
    const now = this.now();
    let entry = this.pending.get(pane.paneId);
    if (!entry) {
      entry = { seenMs: now, nudgedMs: Number.NEGATIVE_INFINITY, nudges: 0 };
      this.pending.set(pane.paneId, entry);
    }
    if (pane.deadStatus === undefined && entry.nudges < NUDGES && now - entry.nudgedMs >= NUDGE_EVERY_MS) {
      entry.nudgedMs = now;
      entry.nudges += 1;
      await this.nudge(pane.paneId).catch(() => undefined);
    }
    return pane.deadTime ?? Math.floor(entry.seenMs / 1000);
  }

  /** Forgets the panes that are not among `deadPaneIds` any more. */
  retain(deadPaneIds: ReadonlySet<string>): void {
    for (const id of this.pending.keys()) if (!deadPaneIds.has(id)) this.pending.delete(id);
  }
}

/** Sends SIGCHLD to the tmux server that holds `paneId`, so that it reaps a process it missed. */
export async function nudgeReaper(tmux: TmuxClient, paneId: string): Promise<void> {
  const pid = Number((await tmux.query(["display-message", "-p", "-t", paneId, "#{pid}"])).trim());
  if (Number.isSafeInteger(pid) && pid > 1) process.kill(pid, "SIGCHLD");
}
