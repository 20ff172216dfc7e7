import type { PaneInfo } from "../tmux/panes.js";
import { paneStamp } from "../tmux/panes.js";
import type { SessionObservation } from "./observation.js";
import { PathWatcher } from "./path-watcher.js";

/**
 * Longest a settled observation (an idle or completed CLI session whose pane and watched files did not
 * change) is reused before its native state is read again anyway: bounds how late a change no file
 * event reported (an unwatchable folder, the inotify limit, a CLI replaced under the same pane
 * command) is seen, at the cost of one cheap read per session per this interval.
 */
export const SETTLED_RECHECK_MS = 30_000;

/** An observation reused while its pane, the seen id and the watched files stay the same. */
interface SettledObservation {
  /** `reuseStamps`'s stamp when it was made. */
  readonly stamp: string;
  /** The pane's change generation when its files were read (a file event since then bumps it). */
  readonly generation: number;
  readonly at: number;
  readonly observation: SessionObservation;
}

/**
 * The settled-session bookkeeping of the status engine. While a watch loop subscribes (`watch`), it
 * watches the files each pane's state lives in and hands back a settled pane's observation until its
 * pane, its seen id, its folder's panes or one of those files changes (or SETTLED_RECHECK_MS passes):
 * 100 idle sessions then cost a comparison each per poll. It also keeps the newest observation per
 * pane, so an equal new one is replaced by it and an unchanged session stays the identical object.
 */
export class SettledSessions {
  private readonly settled = new Map<string, SettledObservation>();
  /** Bumped per pane when one of its watched files changes. */
  private readonly generations = new Map<string, number>();
  private readonly statePaths = new Map<string, readonly string[]>();
  private readonly previous = new Map<string, SessionObservation>();
  /** Per pane, the native log its observation was read from (`chatLogPath`), when it has one. */
  private readonly boundLogs = new Map<string, string>();
  private pathPanes = new Map<string, Set<string>>();
  private watcher: PathWatcher | undefined;
  /** The subscriber's wake-up, while one subscribes. */
  private wake: (() => void) | undefined;

  /**
   * Watches the state paths of the panes recorded from now on and calls `wake` when one changes. One
   * subscriber at a time; unsubscribing stops watching and reuse.
   */
  watch(wake: () => void): () => void {
    this.watcher?.close();
    const watcher = new PathWatcher((path, file) => {
      for (const paneId of this.changedBy(path, file)) this.bump(paneId);
      wake();
    });
    this.watcher = watcher;
    this.wake = wake;
    this.settled.clear();
    return () => {
      watcher.close();
      if (this.watcher === watcher) {
        this.watcher = undefined;
        this.wake = undefined;
        this.settled.clear();
      }
    };
  }

  /**
   * The panes a change of `path` may concern. A write to one file of a folder that several panes
   * watch (a Codex day folder holds every session's rollout; a Claude Code project folder every
   * transcript of that folder) concerns the panes whose log that file is, and the panes with no log
   * yet; a file that is no pane's log (a new conversation) may become any one's, so it concerns all.
   */
  private changedBy(path: string, file: string | undefined): Iterable<string> {
    const panes = this.pathPanes.get(path) ?? new Set<string>();
    if (file === undefined) return panes;
    const owners = [...panes].filter((paneId) => this.boundLogs.get(paneId) === file);
    if (owners.length === 0) return panes;
    return [...panes].filter((paneId) => !this.boundLogs.has(paneId) || this.boundLogs.get(paneId) === file);
  }

  /** The observation to reuse for a pane whose stamp is `stamp`, if it is settled and nothing changed. */
  reusable(paneId: string, stamp: string, now: number): SessionObservation | undefined {
    const cached = this.watcher ? this.settled.get(paneId) : undefined;
    return cached &&
      cached.stamp === stamp &&
      cached.generation === this.generation(paneId) &&
      now - cached.at < SETTLED_RECHECK_MS
      ? cached.observation
      : undefined;
  }

  /** The pane's change generation: read it before reading the pane's files, pass it to `record`. */
  generation(paneId: string): number {
    return this.generations.get(paneId) ?? 0;
  }

  /** The observation last reported for the pane, if any. */
  previousOf(paneId: string): SessionObservation | undefined {
    return this.previous.get(paneId);
  }

  /**
   * Records a fresh reading of a pane; returns the observation to report (the previous one when equal).
   * A settled one is reused by `reusable` until something it depends on changes.
   */
  record(
    paneId: string,
    read: { stamp: string; generation: number; at: number; settled: boolean; statePaths: readonly string[] },
    fresh: SessionObservation,
  ): SessionObservation {
    const before = this.previous.get(paneId);
    const observation = before && sameObservation(before, fresh) ? before : fresh;
    this.previous.set(paneId, observation);
    this.statePaths.set(paneId, read.statePaths);
    if (observation.chatLogPath) this.boundLogs.set(paneId, observation.chatLogPath);
    else this.boundLogs.delete(paneId);
    if (read.settled)
      this.settled.set(paneId, { stamp: read.stamp, generation: read.generation, at: read.at, observation });
    else this.settled.delete(paneId);
    return observation;
  }

  /**
   * Forgets the panes not in `live`, and points the watcher at the state paths of the live ones; a
   * newly armed path's panes are read again at once (writes before a watch was armed were not seen by
   * it).
   */
  async prune(live: ReadonlySet<string>): Promise<void> {
    for (const map of [this.settled, this.generations, this.statePaths, this.previous, this.boundLogs]) {
      for (const id of map.keys()) if (!live.has(id)) map.delete(id);
    }
    const watcher = this.watcher;
    if (!watcher) return;
    const pathPanes = new Map<string, Set<string>>();
    for (const [paneId, paths] of this.statePaths) {
      for (const path of paths) {
        const set = pathPanes.get(path);
        if (set) set.add(paneId);
        else pathPanes.set(path, new Set([paneId]));
      }
    }
    this.pathPanes = pathPanes;
    const armed = await watcher.set(pathPanes.keys());
    for (const path of armed) for (const paneId of pathPanes.get(path) ?? []) this.bump(paneId);
    // Their next read is now, not at the next timed look (2 s while settled): a write that came
    // between the read and the arming would otherwise show that late.
    if (armed.length > 0) this.wake?.();
  }

  private bump(paneId: string): void {
    this.generations.set(paneId, this.generation(paneId) + 1);
  }
}

/**
 * Per session, what a settled observation depends on besides its files: the pane (`paneStamp`), the
 * completion id marked seen, and the panes in its folder (`pane_current_path`) with their processes
 * and commands, since another instance of a CLI opening or leaving the folder may change which
 * native log is this pane's.
 */
export function reuseStamps(
  panes: ReadonlyMap<string, PaneInfo>,
  seen: ReadonlyMap<string, string>,
): Map<string, string> {
  const census = new Map<string, string>();
  for (const pane of panes.values()) {
    const entry = `${pane.paneId}:${pane.panePid}:${pane.paneCurrentCommand}`;
    const before = census.get(pane.paneCurrentPath);
    census.set(pane.paneCurrentPath, before === undefined ? entry : `${before},${entry}`);
  }
  const stamps = new Map<string, string>();
  for (const [session, pane] of panes) {
    stamps.set(session, `${paneStamp(pane)}\0${seen.get(session) ?? ""}\0${census.get(pane.paneCurrentPath) ?? ""}`);
  }
  return stamps;
}

/** True when two observations say the same (field by field; times by value). */
export function sameObservation(a: SessionObservation, b: SessionObservation): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)] as (keyof SessionObservation)[]);
  for (const key of keys) {
    const x = a[key];
    const y = b[key];
    if (x instanceof Date && y instanceof Date ? x.getTime() !== y.getTime() : x !== y) return false;
  }
  return true;
}
