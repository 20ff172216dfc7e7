import type { IDisposable, ITerminalAddon, Terminal } from "@xterm/xterm";

/** A finger dragging the terminal down by this many pixels is scrolling back. */
const TOUCH_SCROLL_PX = 12;
/**
 * Lines a wheel notch or a swipe scrolls back at least once a scrollback refresh has brought the
 * history (before it, a burst drawn as a redraw may have left nothing to scroll to).
 */
export const REFRESH_SCROLL_LINES = 3;

/** What the refresh needs from the terminal's connection. */
export interface ScrollbackRefreshOptions {
  /** Where wheel and touch gestures are watched (the terminal's host element). */
  readonly element: EventTarget;
  /** True while attached (a refresh then makes sense). */
  isAttached(): boolean;
  /** Attaches again: the new attachment writes the pane's history whole. */
  reattach(): void;
}

/**
 * Brings back lines tmux skipped. tmux draws a burst of output as a redraw of the screen, so the lines
 * in between never reach this terminal's scrollback. The addon counts line feeds since the
 * attachment's history: a redraw (the one after every attach among them) has fewer than the screen
 * has rows, more means new output. Scrolling back then (wheel, a finger, Shift+PageUp through
 * `refresh`) first attaches again, and once the history is written (`historyWritten`) the view returns
 * to the same distance from the bottom. Only in the normal buffer (full-screen programs keep no
 * scrollback), without mouse reporting, when scrolling starts from the bottom, once per burst.
 */
export class ScrollbackRefreshAddon implements ITerminalAddon {
  private terminal: Terminal | undefined;
  private lineFeed: IDisposable | undefined;
  private lineFeedsSinceHistory = 0;
  /**
   * Lines back a refresh under way returns to at least (the gesture that started it); the view returns
   * further if it was scrolled further meanwhile. Undefined: no refresh under way.
   */
  private refreshScroll: number | undefined;
  private touchY: number | undefined;

  constructor(private readonly options: ScrollbackRefreshOptions) {}

  /** Starts counting line feeds and watching scroll gestures. */
  activate(terminal: Terminal): void {
    this.terminal = terminal;
    this.lineFeed = terminal.onLineFeed(() => {
      this.lineFeedsSinceHistory++;
    });
    // Captured: the terminal's own scrolling handles these events and stops them there.
    const el = this.options.element;
    el.addEventListener("wheel", this.onWheel, { capture: true, passive: true });
    el.addEventListener("touchstart", this.onTouchStart, { capture: true, passive: true });
    el.addEventListener("touchmove", this.onTouchMove, { capture: true, passive: true });
  }

  /** Stops counting and watching; a refresh under way is forgotten. */
  dispose(): void {
    this.lineFeed?.dispose();
    this.lineFeed = undefined;
    const el = this.options.element;
    el.removeEventListener("wheel", this.onWheel, { capture: true });
    el.removeEventListener("touchstart", this.onTouchStart, { capture: true });
    el.removeEventListener("touchmove", this.onTouchMove, { capture: true });
    this.refreshScroll = undefined;
    this.terminal = undefined;
  }

  /** A gesture scrolling back `lines`: refreshes the scrollback first when output has arrived since. */
  refresh(lines: number): void {
    const term = this.terminal;
    if (!term || this.refreshScroll !== undefined || this.lineFeedsSinceHistory <= term.rows) return;
    const b = term.buffer.active;
    // Only a start of scrolling back from the bottom: further scrolling reads what is there. With mouse
    // reporting on (tmux's `mouse`, a full-screen program) the wheel goes to the program, not here.
    if (!this.options.isAttached() || b.type !== "normal" || b.viewportY !== b.baseY) return;
    if (term.modes.mouseTrackingMode !== "none") return;
    this.lineFeedsSinceHistory = 0;
    // The view scrolls on meanwhile through the old lines; where it is when the history comes counts.
    this.refreshScroll = lines;
    this.options.reattach();
  }

  /**
   * A new attachment is about to reset the terminal: how many lines back the view should return to
   * once the history is written (0 unless a refresh is under way), and the refresh is over.
   */
  takeScrollBack(): number {
    const old = this.terminal?.buffer.active;
    const scrolledUp =
      this.refreshScroll !== undefined && old?.type === "normal"
        ? Math.max(this.refreshScroll, old.baseY - old.viewportY)
        : 0;
    this.refreshScroll = undefined;
    return scrolledUp;
  }

  /**
   * The attachment's history has been written: its lines are not new output. Then back to where the
   * person was scrolling, counted from the bottom, now with every line.
   */
  historyWritten(scrolledUp: number): void {
    this.lineFeedsSinceHistory = 0;
    if (scrolledUp > 0) this.terminal?.scrollLines(-scrolledUp);
  }

  private readonly onWheel = (e: Event) => {
    if ((e as WheelEvent).deltaY < 0) this.refresh(REFRESH_SCROLL_LINES);
  };

  private readonly onTouchStart = (e: Event) => {
    this.touchY = (e as TouchEvent).touches[0]?.clientY;
  };

  private readonly onTouchMove = (e: Event) => {
    const y = (e as TouchEvent).touches[0]?.clientY;
    if (this.touchY !== undefined && y !== undefined && y - this.touchY > TOUCH_SCROLL_PX) {
      this.touchY = undefined;
      this.refresh(REFRESH_SCROLL_LINES);
    }
  };
}
