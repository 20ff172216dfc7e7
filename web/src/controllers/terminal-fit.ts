import type { FitAddon } from "@xterm/addon-fit";
import type { Terminal } from "@xterm/xterm";
import type { ReactiveController, ReactiveControllerHost } from "lit";
import { describeError } from "../api/errors.js";
import type { CellSize } from "../terminal/terminal-connection.js";
import { ResizeController } from "./resize.js";

/** Size changes are sent at most once per this long while a window is being dragged. */
const RESIZE_SETTLE_MS = 80;
/** Largest size asked for in either direction (tmux's limit is far above any screen). */
const MAX_CELLS = 1000;
/** The size asked for before the page could be measured. */
const FALLBACK_SIZE: CellSize = { cols: 80, rows: 24 };
/**
 * The smallest font (CSS px) a viewer shrinks to so that another client's wider window fits its
 * width; a window wider still scrolls sideways in its box rather than shrink past legibility.
 */
const MIN_FIT_FONT_PX = 6;
/** Font sizes are stepped by this much, so a window a column wider does not re-render the font. */
const FONT_STEP_PX = 0.5;
/**
 * The fewest rows a viewer asks for: the classic terminal height, which agents' dialogs are drawn for.
 * A box shorter than that (a phone with a prompt card or its keyboard open) shows the window's bottom
 * rows and scrolls, rather than squeezing the agent's screen until its dialog no longer fits.
 */
export const MIN_ROWS = 24;

/** What fitting needs from the terminal view. */
export interface TerminalFitOptions {
  /** The terminal and its fit addon, once they exist. */
  terminal(): { term: Terminal; fit: FitAddon } | undefined;
  /** False while the terminal is hidden behind another tab (nothing to measure then). */
  active(): boolean;
  /** The element whose size the terminal fills. */
  scroller(): HTMLElement | null;
  /** Asks the window for a size; `takeOver` makes this viewer its owner. */
  requestSize(size: CellSize, takeOver: boolean): Promise<void> | undefined;
  /** Says that a size request failed. */
  onError(message: string): void;
}

/**
 * Fits the terminal to the page and keeps the window's size in view: a sole viewer's size drives the
 * window (asked for at most once per settle time while a window is dragged); with other clients
 * attached the window keeps its size and `takeOver` makes this screen's size the window's. While
 * another client's window is wider than this screen (a phone joining a desktop's session), the font
 * shrinks until the window's width fits, never cropped, and is back at its own size once this viewer
 * owns the size. Sizes measured and asked for are always at the terminal's own font.
 */
export class TerminalFitController implements ReactiveController {
  /** The tmux window's size. */
  windowSize: CellSize = { cols: 0, rows: 0 };
  /** The size that fits the page. */
  fitSize: CellSize = { cols: 0, rows: 0 };
  /** True when this viewer sets the window's size. */
  sizeOwner = true;
  private requested: CellSize = { cols: 0, rows: 0 };
  /** The terminal's own font size, before any shrinking (0 until a terminal is seen). */
  private baseFont = 0;
  private readonly resize: ResizeController;

  constructor(
    private readonly host: ReactiveControllerHost,
    private readonly options: TerminalFitOptions,
  ) {
    this.resize = new ResizeController(host, { onResize: () => this.refit(), settleMs: RESIZE_SETTLE_MS });
    host.addController(this);
  }

  /** The terminal is released on disconnection: the next one asks for its size afresh. */
  hostDisconnected(): void {
    this.requested = { cols: 0, rows: 0 };
  }

  /** Starts following the scroller's size. */
  observe(scroller: Element): void {
    this.resize.observe(scroller);
  }

  /** Fits again soon (a tab shown, full screen, an attachment). */
  schedule(): void {
    this.resize.schedule();
  }

  /** A new attachment with the window at `windowSize`: fit again if the page's size differs. */
  attached(windowSize: CellSize, owner: boolean): void {
    this.applyWindow(windowSize, owner);
    this.requested = windowSize;
    this.schedule();
  }

  /** The window's size or its owner changed: the terminal takes the window's size. */
  applyWindow(size: CellSize, owner: boolean): void {
    this.windowSize = size;
    this.sizeOwner = owner;
    this.host.requestUpdate();
    const term = this.options.terminal()?.term;
    if (!term || size.cols < 1 || size.rows < 1) return;
    this.fitFont(term, size, owner);
    if (term.cols !== size.cols || term.rows !== size.rows) term.resize(size.cols, size.rows);
    this.keepBottomInView();
  }

  /** A window taller than its box shows its bottom rows, where an agent's input and dialogs are. */
  private keepBottomInView(): void {
    const scroller = this.options.scroller();
    if (scroller && scroller.scrollHeight > scroller.clientHeight) scroller.scrollTop = scroller.scrollHeight;
  }

  /** The font that makes another client's window `size` fit this screen's width; the own font as owner. */
  private fitFont(term: Terminal, size: CellSize, owner: boolean): void {
    const base = this.ownFont(term);
    let font = base;
    if (!owner && this.fitSize.cols > 0 && size.cols > this.fitSize.cols) {
      const fitting = Math.floor((base * this.fitSize.cols) / size.cols / FONT_STEP_PX) * FONT_STEP_PX;
      font = Math.max(MIN_FIT_FONT_PX, fitting);
    }
    if (term.options.fontSize !== font) term.options.fontSize = font;
  }

  private ownFont(term: Terminal): number {
    if (this.baseFont === 0) this.baseFont = term.options.fontSize ?? 0;
    return this.baseFont;
  }

  /**
   * The size that fits the page now at the terminal's own font (the last one while hidden, 80×24
   * before any), at least MIN_ROWS tall; measured while the font is shrunk, it is scaled back to the
   * own font.
   */
  measure(): CellSize {
    const t = this.options.active() ? this.options.terminal() : undefined;
    const proposed = t?.fit.proposeDimensions();
    if (
      t &&
      proposed &&
      Number.isFinite(proposed.cols) &&
      Number.isFinite(proposed.rows) &&
      proposed.cols > 1 &&
      proposed.rows > 1
    ) {
      const scale = (t.term.options.fontSize ?? 1) / (this.ownFont(t.term) || 1);
      const cols = scale < 1 ? Math.floor(proposed.cols * scale) : proposed.cols;
      const rows = scale < 1 ? Math.floor(proposed.rows * scale) : proposed.rows;
      this.fitSize = { cols: Math.min(MAX_CELLS, cols), rows: Math.min(MAX_CELLS, Math.max(MIN_ROWS, rows)) };
      this.host.requestUpdate();
    } else if (this.fitSize.cols === 0) {
      this.fitSize = FALLBACK_SIZE;
      this.host.requestUpdate();
    }
    return this.fitSize;
  }

  /** Makes this screen's size the window's, though other clients are attached. */
  takeOver(): void {
    const term = this.options.terminal()?.term;
    // Measured at the own font: the window then takes the size this screen shows at it.
    if (term && term.options.fontSize !== this.ownFont(term)) term.options.fontSize = this.ownFont(term);
    const size = this.measure();
    this.requested = size;
    this.options
      .requestSize(size, true)
      ?.catch((err: unknown) => this.options.onError(`Could not take over the size: ${describeError(err)}`));
  }

  private refit(): void {
    if (!this.options.active() || !this.options.terminal()) return;
    const scroller = this.options.scroller();
    if (!scroller || scroller.clientWidth === 0 || scroller.clientHeight === 0) return;
    const size = this.measure();
    const term = this.options.terminal()?.term;
    if (term && !this.sizeOwner && this.windowSize.cols > 0) this.fitFont(term, this.windowSize, false);
    this.keepBottomInView();
    if (size.cols === this.requested.cols && size.rows === this.requested.rows) return;
    this.requested = size;
    if (this.sizeOwner) this.applyWindow(size, true);
    this.options
      .requestSize(size, false)
      ?.catch((err: unknown) => this.options.onError(`Could not resize the terminal: ${describeError(err)}`));
  }
}
