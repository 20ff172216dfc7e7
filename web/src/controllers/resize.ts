import type { ReactiveController, ReactiveControllerHost } from "lit";

/** The constructor of a ResizeObserver (a test passes a fake). */
export type ResizeObserverFactory = (callback: () => void) => Pick<ResizeObserver, "observe" | "disconnect">;

/** How a resize reaches the host. */
export interface ResizeOptions {
  /** Called with the size settled (at most once per `settleMs`, in an animation frame). */
  readonly onResize: () => void;
  /** Changes within this long are folded into one call; 0 calls at once on every change. */
  readonly settleMs: number;
  readonly createObserver?: ResizeObserverFactory;
  readonly requestFrame?: (callback: () => void) => void;
}

/**
 * Watches an element's size while the host is connected and tells the host, folding a drag's many
 * changes into one (a terminal sends its size to tmux at most once per `settleMs`). `schedule` asks for
 * the same call for another reason (a tab shown, full screen, an attachment).
 */
export class ResizeController implements ReactiveController {
  private observer: Pick<ResizeObserver, "observe" | "disconnect"> | undefined;
  private element: Element | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly createObserver: ResizeObserverFactory;
  private readonly requestFrame: (callback: () => void) => void;

  constructor(
    host: ReactiveControllerHost,
    private readonly options: ResizeOptions,
  ) {
    this.createObserver = options.createObserver ?? ((cb) => new ResizeObserver(cb));
    this.requestFrame = options.requestFrame ?? ((cb) => requestAnimationFrame(cb));
    host.addController(this);
  }

  /** Watches this element (it exists only after the host's first render). */
  observe(element: Element): void {
    this.element = element;
    this.observer?.disconnect();
    this.observer = this.createObserver(() => this.changed());
    this.observer.observe(element);
  }

  /** Asks for a settled `onResize` call as if the size had changed. */
  schedule(): void {
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.requestFrame(() => this.options.onResize());
    }, this.options.settleMs);
  }

  hostConnected(): void {
    if (this.element && !this.observer) this.observe(this.element);
  }

  hostDisconnected(): void {
    this.observer?.disconnect();
    this.observer = undefined;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private changed(): void {
    if (this.options.settleMs === 0) this.options.onResize();
    else this.schedule();
  }
}
