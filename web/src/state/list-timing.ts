import type { ReactiveControllerHost } from "lit";

/** Timing samples of applying a WatchSessions event kept for the benchmark and for troubleshooting. */
export const MAX_APPLY_SAMPLES = 200;
/** The performance mark set when the first session list is on screen (the benchmark reads it). */
export const FIRST_LIST_MARK = "staragent:first-session-list";

/** What the list timing needs from the page. */
export interface ListTimingOptions {
  /** The session list, whose render completes an applied event (null while none is shown). */
  readonly list: () => { readonly updateComplete: Promise<unknown> } | null;
  /** Called once, when the first list is on screen: the moment to warm what the next view needs. */
  readonly firstListShown: () => void;
}

/**
 * How long the session list takes to show what the Hub sent: for each WatchSessions event that
 * changed something (and the first), the milliseconds from receiving it until the host and the list
 * have rendered it, newest last, for the benchmark and for troubleshooting; and the mark of the first
 * list on screen. DOM-free: the host is anything that renders on request (the app; tests a fake).
 */
export class ListTiming {
  /** Milliseconds from receiving a WatchSessions event to the list showing it (newest last). */
  readonly samples: number[] = [];
  private firstShown = false;

  constructor(
    private readonly host: Pick<ReactiveControllerHost, "requestUpdate" | "updateComplete">,
    private readonly options: ListTimingOptions,
  ) {}

  /** An event with `changes` sessions added, changed or removed was applied, received at `start`. */
  applied(changes: number, start: number): void {
    if (changes === 0 && this.firstShown) return;
    void this.host.updateComplete.then(async () => {
      await this.options.list()?.updateComplete;
      this.samples.push(performance.now() - start);
      if (this.samples.length > MAX_APPLY_SAMPLES) this.samples.shift();
    });
    this.host.requestUpdate();
  }

  /** The list rendered; `loaded` once it holds the Hub's sessions (the first time marks the page). */
  listRendered(loaded: boolean): void {
    if (this.firstShown || !loaded) return;
    this.firstShown = true;
    performance.mark(FIRST_LIST_MARK);
    this.options.firstListShown();
  }
}
