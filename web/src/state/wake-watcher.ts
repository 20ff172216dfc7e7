/** How often the wall clock is compared with the timer clock. */
const TICK_MS = 1_000;
/**
 * A gap between ticks this much longer than expected means the machine slept (timers stop, the wall
 * clock does not): every stream is then suspect and is reopened.
 */
export const WAKE_GAP_MS = 15_000;

/** Why streams should be checked at once. */
export type WakeReason = "clock-gap" | "page-restored" | "resumed" | "online" | "visible-again";

/**
 * Notices the moments when open connections are likely dead without anyone having been told: the
 * machine slept (a gap in the wall clock), the page came back from the back/forward cache or from being
 * frozen, the network came back, or the tab was hidden for a long time.
 */
export class WakeWatcher {
  private timer: ReturnType<typeof setInterval> | undefined;
  private lastTick = Date.now();
  private hiddenSince: number | undefined;
  private readonly cleanups: Array<() => void> = [];

  constructor(private readonly onWake: (reason: WakeReason) => void) {}

  start(): void {
    if (this.timer !== undefined) return;
    this.lastTick = Date.now();
    this.timer = setInterval(() => {
      const now = Date.now();
      if (now - this.lastTick > TICK_MS + WAKE_GAP_MS) this.onWake("clock-gap");
      this.lastTick = now;
    }, TICK_MS);
    this.listen(window, "pageshow", (e) => {
      if ((e as PageTransitionEvent).persisted) this.onWake("page-restored");
    });
    this.listen(document, "resume", () => this.onWake("resumed"));
    this.listen(window, "online", () => this.onWake("online"));
    this.listen(document, "visibilitychange", () => {
      if (document.visibilityState === "hidden") {
        this.hiddenSince = Date.now();
        return;
      }
      const since = this.hiddenSince;
      this.hiddenSince = undefined;
      if (since !== undefined && Date.now() - since > WAKE_GAP_MS) this.onWake("visible-again");
    });
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    for (const cleanup of this.cleanups.splice(0)) cleanup();
  }

  private listen(target: EventTarget, type: string, handler: (e: Event) => void): void {
    target.addEventListener(type, handler);
    this.cleanups.push(() => target.removeEventListener(type, handler));
  }
}
