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
 * command starting or ending, a rename, a title). Each look spawns one `tmux list-panes` (about 15 ms
 * of CPU over node, the tmux client and the server with 100 panes): most of an idle machine's cost.
 */
export const WATCH_IDLE_INTERVAL_MS = 2_000;
/**
 * Least time between two looks of the watch loop: a CLI writing its log many times a second costs at
 * most this many reads, and a change waits at most this long for the next look.
 */
const WATCH_MIN_GAP_MS = 50;
/** How long a quiet watch stream waits before sending a heartbeat, so proxies keep it open. */
export const WATCH_HEARTBEAT_MS = 15_000;

/** What the watch loop drives. */
export interface WatchLoopOptions {
  /** Where native state changes come from, and whether a session needs the fast interval. */
  readonly inspector: Pick<SessionInspector, "watchChanges" | "needsFastPoll">;
  /** The `/proc` probe that notices panes created or ended between idle looks. */
  readonly probe: Pick<TmuxServerProbe, "mark" | "changed">;
  /** Reads the model (tmux and native state) once; the read publishes it to the watchers. */
  readonly read: () => Promise<unknown>;
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

  /** Makes the loop look again now (a change this process made, or a native state file written). */
  wake(): void {
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
    // Native state changes wake the loop at once while it runs; nothing is watched once it stops.
    const unwatch = inspector.watchChanges?.(() => this.wake());
    try {
      while (!stop.aborted && this.options.watched()) {
        const startedAt = Date.now();
        this.woken.take();
        const before = this.options.model();
        try {
          await probe.mark(this.options.hasPanes());
          await this.options.read();
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
        const nextLook = startedAt + (fast ? WATCH_INTERVAL_MS : WATCH_IDLE_INTERVAL_MS);
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
