import type { ReactiveController, ReactiveControllerHost } from "lit";

/** What a host does as the page is hidden, shown, or enters and leaves the back/forward cache. */
export interface PageLifecycleHandlers {
  /** A hidden page lets go after this long (browsers allow few connections per host). */
  readonly hiddenReleaseMs: number;
  /** The page has stayed hidden for `hiddenReleaseMs`. */
  onHiddenLong(): void;
  /** The page is visible again (any pending release is cancelled). */
  onVisible(): void;
  /** The page is leaving: open streams would keep it out of the back/forward cache. */
  onPageHide(): void;
  /** The page came back from the back/forward cache. */
  onPageRestore(): void;
}

/** The parts of `window` and `document` the controller listens on (a test passes its own). */
export interface PageLifecycleEnv {
  readonly window: Pick<Window, "addEventListener" | "removeEventListener">;
  readonly document: Pick<Document, "addEventListener" | "removeEventListener" | "visibilityState">;
}

/**
 * Page visibility and the back/forward cache for one host: a page hidden for a while releases what it
 * holds, a visible one takes it again, and a page leaving closes its streams so the browser can keep it
 * in the back/forward cache (reopened when it is restored). Listens only while the host is connected.
 */
export class PageLifecycleController implements ReactiveController {
  private hiddenTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    host: ReactiveControllerHost,
    private readonly handlers: PageLifecycleHandlers,
    private readonly env: PageLifecycleEnv = { window, document },
  ) {
    host.addController(this);
  }

  hostConnected(): void {
    this.env.document.addEventListener("visibilitychange", this.onVisibility);
    this.env.window.addEventListener("pagehide", this.onPageHide);
    this.env.window.addEventListener("pageshow", this.onPageShow);
  }

  hostDisconnected(): void {
    this.env.document.removeEventListener("visibilitychange", this.onVisibility);
    this.env.window.removeEventListener("pagehide", this.onPageHide);
    this.env.window.removeEventListener("pageshow", this.onPageShow);
    this.clearTimer();
  }

  private readonly onVisibility = () => {
    if (this.env.document.visibilityState === "hidden") {
      this.clearTimer();
      this.hiddenTimer = setTimeout(() => {
        this.hiddenTimer = undefined;
        if (this.env.document.visibilityState === "hidden") this.handlers.onHiddenLong();
      }, this.handlers.hiddenReleaseMs);
      return;
    }
    this.clearTimer();
    this.handlers.onVisible();
  };

  private readonly onPageHide = () => this.handlers.onPageHide();

  private readonly onPageShow = (e: Event) => {
    if ((e as PageTransitionEvent).persisted) this.handlers.onPageRestore();
  };

  private clearTimer(): void {
    if (this.hiddenTimer !== undefined) clearTimeout(this.hiddenTimer);
    this.hiddenTimer = undefined;
  }
}
