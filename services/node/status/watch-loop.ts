import type { Session } from "../../../gen/staragent/v1/session_pb.js";
import { sleep } from "../../common/async-queue.js";
import type { Logger } from "../../common/log.js";
import { WakeSignal } from "../../common/wake-signal.js";
import type { TmuxServerProbe } from "../tmux/server-probe.js";
import type { SessionInspector } from "./observation.js";
import { sameModel } from "./same-model.js";

/**
 * How often the watch loop looks at tmux and the native logs while anyone watches and a session's
 * status can change with nothing but time or the screen (a turn running, a prompt shown, a CLI without
 * a log yet): no file event reports those.
 */
export const WATCH_INTERVAL_MS = 250;
/**
 * How often it looks while every session is settled (idle or completed CLIs, shells). Native log
 * writes wake it at once through file watches, and panes created or ended through a `/proc` probe
 * every WATCH_INTERVAL_MS, so this bounds only how late other tmux-only changes are seen (a shell
 * command starting or ending, a rename, a title). Each look runs one `tmux list-panes` (through the
 * pane lister's shell, `tmux/pane-lister.ts`): with the tmux client and server, most of an idle
 * machine's cost.
 * A look woken by native log writes alone asks tmux only on this schedule (see `LookKind`).
 */
export const WATCH_IDLE_INTERVAL_MS = 2_000;
/**
 * Least time between two looks of the watch loop: a CLI writing its log many times a second costs at
 * most this many reads, and a change waits at most this long for the next look.
 */
const WATCH_MIN_GAP_MS = 50;
/** How long a quiet watch stream waits before sending a heartbeat, so proxies keep it open. */
export const WATCH_HEARTBEAT_MS = 15_000;

/**
 * What one look reads. `full`: tmux (`list-panes`) and the native state. `logs`: the native state over
 * the panes of the last full look, for a look woken only by native log writes while that list is
 * younger than the loop's own interval and the `/proc` probe saw no pane created or ended. A CLI
 * writing its log many times a second, or a hundred sessions finishing turns at once, then costs
 * reads of those logs, not a `tmux` process per look: spawning one from a Node process of this size
 * takes milliseconds of its one thread.
 */
export type LookKind = "full" | "logs";

/** What the watch loop drives. */
export interface WatchLoopOptions {
  /** Where native state changes come from, and whether a session needs the fast interval. */
  readonly inspector: Pick<SessionInspector, "watchChanges" | "needsFastPoll">;
  /** The `/proc` probe that notices panes created or ended between idle looks. */
  readonly probe: Pick<TmuxServerProbe, "mark" | "changed">;
  /** Reads the model once (`LookKind` says how much); the read publishes it to the watchers. */
  readonly read: (kind: LookKind) => Promise<unknown>;
  /** The newest model published (by the loop or by any other read). */
  readonly model: () => ReadonlyMap<string, Session> | undefined;
  /** True while the newest read found panes (the probe then has a server to mark). */
  readonly hasPanes: () => boolean;
  /** True while anyone watches: the loop stops when nobody does. */
  readonly watched: () => boolean;
  /** Sends watchers a heartbeat (after WATCH_HEARTBEAT_MS without a change). */
  readonly heartbeat: () => void;
  readonly log: Logger;
}

/**
 * The scheduling of a machine's watch loop: one look (a model read) at a time, every WATCH_INTERVAL_MS
 * while a status can change by itself, WATCH_IDLE_INTERVAL_MS while everything is settled, at once
 * (but at most every WATCH_MIN_GAP_MS) when woken by a file event or a change made through the API.
 * It runs only while anyone watches.
 */
export class WatchLoop {
  private running: Promise<void> | undefined;
  /** Set from `start` until the loop has ended, in the same tick as its last check of `watched`. */
  private active = false;
  private readonly stop = new AbortController();
  private readonly woken = new WakeSignal();
  /** True while a wake that was not a native log write (an API change) waits to be taken. */
  private wokenBesidesLogs = false;

  constructor(private readonly options: WatchLoopOptions) {}

  /** True from `start` until the loop has ended. */
  get isRunning(): boolean {
    return this.active;
  }

  /** Starts the loop unless it runs (a watcher joined). */
  start(): void {
    if (this.active || this.stop.signal.aborted) return;
    this.active = true;
    this.running = this.run();
  }

  /** Makes the loop look again now, at tmux too (a change made through the API). */
  wake(): void {
    this.wokenBesidesLogs = true;
    this.woken.wake();
  }

  /** Makes the loop look again now at the native logs (one was written). */
  private wakeForLogs(): void {
    this.woken.wake();
  }

  /** Stops the loop for good; resolves once it has. */
  async close(): Promise<void> {
    this.stop.abort();
    await this.running;
  }

  private async run(): Promise<void> {
    const { inspector, probe, log } = this.options;
    const stop = this.stop.signal;
    let quietSince = Date.now();
    let lastFullLook = Number.NEGATIVE_INFINITY;
    // Native state changes wake the loop at once while it runs; nothing is watched once it stops.
    const unwatch = inspector.watchChanges?.(() => this.wakeForLogs());
    try {
      while (!stop.aborted && this.options.watched()) {
        const startedAt = Date.now();
        const interval = (inspector.needsFastPoll ?? true) ? WATCH_INTERVAL_MS : WATCH_IDLE_INTERVAL_MS;
        const woken = this.woken.take();
        const besidesLogs = this.wokenBesidesLogs;
        this.wokenBesidesLogs = false;
        const before = this.options.model();
        try {
          const logsOnly = woken && !besidesLogs && startedAt - lastFullLook < interval && !(await probe.changed());
          if (logsOnly) await this.options.read("logs");
          else {
            lastFullLook = startedAt;
            await probe.mark(this.options.hasPanes());
            await this.options.read("full");
          }
        } catch (err) {
          log.warn("watch loop could not read tmux", { error: err instanceof Error ? err.message : String(err) });
        }
        const after = this.options.model();
        if (after !== before && after && before && !sameModel(before, after)) quietSince = Date.now();
        if (Date.now() - quietSince >= WATCH_HEARTBEAT_MS) {
          this.options.heartbeat();
          quietSince = Date.now();
        }
        const fast = inspector.needsFastPoll ?? true;
        // The next full look is due an interval after the last one, whatever looked in between.
        const nextLook = lastFullLook + (fast ? WATCH_INTERVAL_MS : WATCH_IDLE_INTERVAL_MS);
        // Until the next look: a wake (file written, API change) looks at once; between idle looks a
        // `/proc` read every WATCH_INTERVAL_MS notices panes created or ended.
        while (!this.woken.pending && !stop.aborted) {
          const wait = Math.min(nextLook, Date.now() + WATCH_INTERVAL_MS) - Date.now();
          if (wait <= 0) break;
          await this.woken.wait(wait, stop);
          if (!this.woken.pending && Date.now() < nextLook && (await probe.changed())) break;
        }
        const gap = startedAt + WATCH_MIN_GAP_MS - Date.now();
        if (gap > 0) await sleep(gap, stop);
      }
    } finally {
      unwatch?.();
      this.active = false;
    }
  }
}
