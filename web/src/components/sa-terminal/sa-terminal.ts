import "@xterm/xterm/css/xterm.css";
import { consume } from "@lit/context";
import { FitAddon } from "@xterm/addon-fit";
import { type IDisposable, Terminal } from "@xterm/xterm";
import { html, nothing, type PropertyValues } from "lit";
import { property, state } from "lit/decorators.js";
import { describeError } from "../../api/errors.js";
import { type AppServices, appContext } from "../../state/app-context.js";
import { effectiveTheme } from "../../state/preferences.js";
import { copyToClipboard } from "../../terminal/clipboard.js";
import { pushIntoScrollback, scrollbackPart } from "../../terminal/history.js";
import { QUICK_KEYS, type QuickKey, withCtrl } from "../../terminal/keys.js";
import { osc52Text } from "../../terminal/osc52.js";
import { type CellSize, TerminalConnection, type TerminalState } from "../../terminal/terminal-connection.js";
import { MINIMUM_CONTRAST_RATIO, TERMINAL_THEMES } from "../../terminal/terminal-themes.js";
import { LightElement } from "../base/light-element.js";

/** Lines kept in the view's scrollback (the attach history fills part of it). */
const SCROLLBACK_LINES = 5_000;
/** Font size in pixels; smaller on narrow screens so a phone still shows a useful width. */
const FONT_SIZE = 13;
const NARROW_FONT_SIZE = 12;
/** Below this width (CSS pixels) the narrow font is used. */
const NARROW_WIDTH_PX = 520;
/** Size changes are sent at most once per this long while a window is being dragged. */
const RESIZE_SETTLE_MS = 80;
/** A hidden tab lets go of its terminal after this long (browsers allow few connections per host). */
const HIDDEN_DETACH_MS = 60_000;
/** A finger dragging the terminal down by this many pixels is scrolling back. */
const TOUCH_SCROLL_PX = 12;
/**
 * Lines a wheel notch or a swipe scrolls back at least once a scrollback refresh has brought the
 * history (before it, a burst drawn as a redraw may have left nothing to scroll to).
 */
const REFRESH_SCROLL_LINES = 3;
/** Keystroke-to-echo samples kept (the benchmark reads them; the status line shows their median). */
const MAX_ECHO_SAMPLES = 500;
/** Output arriving later than this after a key press is not counted as that key's echo. */
const ECHO_WINDOW_MS = 2_000;

/** xterm's alternate-screen modes, which the dashboard ignores so tmux's redraws keep a scrollback. */
const ALT_SCREEN_MODES = new Set([47, 1047, 1049]);

/**
 * A session's live terminal: xterm.js fitted to the page, attached through the Hub. A sole viewer's
 * size drives the window; with other clients attached the window keeps its size, the view scrolls, and
 * "Take over size" makes this screen's size the window's. Typed keys go only to this session, held
 * until the attachment is confirmed. The connection state is always visible, and reconnection (with
 * backoff, after sleep, or on request) redraws from the pane's history without duplicating output.
 * Programs can copy to the clipboard with OSC 52; links open only for http(s), in a new tab. On touch
 * screens a quick-key bar offers the keys phones lack. Ctrl+] moves the focus out of the terminal.
 */
export class SaTerminal extends LightElement {
  /** The session's resource name (`nodes/{node}/sessions/{id}`). */
  @property({ attribute: false }) sessionName = "";
  /** True for StarAgent's own sessions (shown the same; for the label). */
  @property({ attribute: false }) system = false;
  /** False while another tab of the session view is shown: no fitting then. */
  @property({ attribute: false }) active = true;

  @consume({ context: appContext }) private app?: AppServices;
  @state() private connection: TerminalState = { kind: "connecting", attempt: 0 };
  @state() private sizeOwner = true;
  @state() private windowSize: CellSize = { cols: 0, rows: 0 };
  @state() private fitSize: CellSize = { cols: 0, rows: 0 };
  @state() private ctrlArmed = false;
  @state() private pendingCopy = "";
  @state() private showQuickKeys = matchMedia("(pointer: coarse)").matches;
  @state() private now = Date.now();
  @state() private echoMedian = 0;
  @state() private fullscreen = false;

  /** Milliseconds from a key press to its echo being written into the terminal, newest last. */
  readonly echoSamples: number[] = [];

  private term: Terminal | undefined;
  /** A focus request that came before the terminal existed. */
  private focusWhenReady = false;
  /**
   * Line feeds written since the attachment's history. tmux draws a burst of output as a redraw of the
   * screen, so the lines in between never reach this terminal's scrollback. A redraw (the one that
   * follows every attach among them) has fewer line feeds than the screen has rows; more than that
   * means new output, and then scrolling back first reads the pane's history again
   * (`refreshScrollback`).
   */
  private lineFeedsSinceHistory = 0;
  /**
   * Lines back a scrollback refresh under way returns to at least (the gesture that started it); the
   * view returns further if it was scrolled further meanwhile. Undefined: no refresh under way.
   */
  private refreshScroll: number | undefined;
  private touchY: number | undefined;
  private fit: FitAddon | undefined;
  private conn: TerminalConnection | undefined;
  private readonly disposables: IDisposable[] = [];
  private readonly cleanups: Array<() => void> = [];
  private resizeObserver: ResizeObserver | undefined;
  private resizeTimer: ReturnType<typeof setTimeout> | undefined;
  private hiddenTimer: ReturnType<typeof setTimeout> | undefined;
  private ticker: ReturnType<typeof setInterval> | undefined;
  private requested: CellSize = { cols: 0, rows: 0 };
  private keyAt: number | undefined;
  private readonly encoder = new TextEncoder();

  /** Every line of the terminal's buffer (scrollback and screen) as text. */
  bufferText(): string {
    const buffer = this.term?.buffer.active;
    if (!buffer) return "";
    const lines: string[] = [];
    for (let i = 0; i < buffer.length; i++) lines.push(buffer.getLine(i)?.translateToString(true) ?? "");
    return lines.join("\n");
  }

  /** How many lines above the bottom the view is scrolled (0: following the output). */
  linesScrolledBack(): number {
    const buffer = this.term?.buffer.active;
    return buffer ? buffer.baseY - buffer.viewportY : 0;
  }

  /** The terminal's size in cells (the window's size when another client sets it). */
  terminalSize(): CellSize {
    return { cols: this.term?.cols ?? 0, rows: this.term?.rows ?? 0 };
  }

  /**
   * Moves the keyboard focus into the terminal; asked before the terminal exists (it is set up after
   * the first render), it moves there once it does, unless the focus went elsewhere meanwhile.
   */
  focusTerminal(): void {
    if (this.term) this.term.focus();
    else this.focusWhenReady = true;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    // Moved in the page: everything was released on disconnect and is set up again.
    if (this.hasUpdated && !this.term) this.setUp();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.stopConnection();
    for (const c of this.cleanups.splice(0)) c();
    this.resizeObserver?.disconnect();
    this.resizeObserver = undefined;
    if (this.ticker !== undefined) clearInterval(this.ticker);
    for (const d of this.disposables.splice(0)) d.dispose();
    this.refreshScroll = undefined;
    this.term?.dispose();
    this.term = undefined;
  }

  protected override firstUpdated(): void {
    this.setUp();
  }

  /** Creates the terminal in the rendered host, wires its events, and attaches. */
  private setUp(): void {
    const host = this.querySelector<HTMLElement>(".term-host");
    const scroller = this.querySelector<HTMLElement>(".term-scroll");
    if (!host || !scroller) return;
    const prefs = this.app?.preferences();
    const term = new Terminal({
      allowProposedApi: false,
      convertEol: false,
      cursorBlink: false,
      fontFamily: getComputedStyle(document.documentElement).getPropertyValue("--mono").trim() || "monospace",
      fontSize: window.innerWidth < NARROW_WIDTH_PX ? NARROW_FONT_SIZE : FONT_SIZE,
      scrollback: SCROLLBACK_LINES,
      minimumContrastRatio: MINIMUM_CONTRAST_RATIO,
      theme: TERMINAL_THEMES[effectiveTheme(prefs?.theme ?? "system")],
      screenReaderMode: prefs?.screenReader ?? false,
      macOptionIsMeta: true,
      rightClickSelectsWord: false,
      linkHandler: {
        activate: (_event, uri) => openSafeLink(uri),
        allowNonHttpProtocols: false,
      },
    });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(host);
    this.term = term;
    this.fit = fit;
    if (this.focusWhenReady) {
      this.focusWhenReady = false;
      const at = document.activeElement;
      if (!at || at === document.body || this.contains(at) || this.closest(".tab-panel") === at) term.focus();
    }
    this.disposables.push(
      term.onData((data) => this.typeText(data)),
      term.onBinary((data) => this.typeBytes(Uint8Array.from(data, (c) => c.charCodeAt(0) & 0xff))),
      term.parser.registerOscHandler(52, (data) => {
        const text = osc52Text(data);
        if (text !== undefined) void this.offerCopy(text);
        return true;
      }),
      term.parser.registerCsiHandler({ prefix: "?", final: "h" }, (params) => isOnlyAltScreen(params)),
      term.parser.registerCsiHandler({ prefix: "?", final: "l" }, (params) => isOnlyAltScreen(params)),
    );
    term.attachCustomKeyEventHandler((e) => this.onTerminalKey(e));
    this.disposables.push(
      term.onLineFeed(() => {
        this.lineFeedsSinceHistory++;
      }),
    );
    // Captured: the terminal's own scrolling handles these events and stops them there.
    this.listen(
      host,
      "wheel",
      (e) => {
        if ((e as WheelEvent).deltaY < 0) this.refreshScrollback(REFRESH_SCROLL_LINES);
      },
      true,
    );
    this.listen(
      host,
      "touchstart",
      (e) => {
        this.touchY = (e as TouchEvent).touches[0]?.clientY;
      },
      true,
    );
    this.listen(
      host,
      "touchmove",
      (e) => {
        const y = (e as TouchEvent).touches[0]?.clientY;
        if (this.touchY !== undefined && y !== undefined && y - this.touchY > TOUCH_SCROLL_PX) {
          this.touchY = undefined;
          this.refreshScrollback(REFRESH_SCROLL_LINES);
        }
      },
      true,
    );
    host.addEventListener("keydown", this.onKeyDownCapture, { capture: true });
    this.cleanups.push(() => host.removeEventListener("keydown", this.onKeyDownCapture, { capture: true }));
    this.resizeObserver = new ResizeObserver(() => this.scheduleFit());
    this.resizeObserver.observe(scroller);
    this.listen(window, "staragent-theme", () => {
      if (this.term)
        this.term.options.theme = TERMINAL_THEMES[effectiveTheme(this.app?.preferences().theme ?? "system")];
    });
    this.listen(window, "staragent-preferences", () => {
      if (this.term) this.term.options.screenReaderMode = this.app?.preferences().screenReader ?? false;
    });
    this.listen(document, "visibilitychange", () => this.onVisibility());
    // Open streams keep a page out of the back/forward cache: let go on leaving, attach again on return.
    this.listen(window, "pagehide", () => this.stopConnection());
    this.listen(window, "pageshow", (e) => {
      if ((e as PageTransitionEvent).persisted && !this.conn) this.startConnection();
    });
    this.listen(document, "fullscreenchange", () => {
      this.fullscreen = document.fullscreenElement === this;
      this.scheduleFit();
    });
    const coarse = matchMedia("(pointer: coarse)");
    const onPointer = () => {
      this.showQuickKeys = coarse.matches;
    };
    coarse.addEventListener("change", onPointer);
    this.cleanups.push(() => coarse.removeEventListener("change", onPointer));
    const unsubscribeWake = this.app?.subscribeWake(() => this.conn?.reattach());
    if (unsubscribeWake) this.cleanups.push(unsubscribeWake);
    this.ticker = setInterval(() => {
      if (this.connection.kind === "waiting") this.now = Date.now();
    }, 1000);
    this.measureFit();
    this.startConnection();
  }

  protected override updated(changed: PropertyValues<this>): void {
    if (changed.has("active") && this.active) this.scheduleFit();
  }

  protected override render() {
    return html`<div class="term-toolbar">
        ${this.renderState()}
        <span class="spacer"></span>
        ${this.renderSize()}
        ${
          this.pendingCopy
            ? html`<button class="copy-offer" @click=${() => this.copyPending()}>Copy the text the program offered</button>`
            : nothing
        }
        <button
          class="quiet"
          title="Full screen: browser shortcuts such as Ctrl+W also reach the terminal (Chromium); hold Esc to leave"
          aria-pressed=${this.fullscreen ? "true" : "false"}
          @click=${() => void this.toggleFullscreen()}
        >
          <svg class="icon" viewBox="0 0 16 16" aria-hidden="true" focusable="false">
            <path d="M2 6V2h4M10 2h4v4M14 10v4h-4M6 14H2v-4" fill="none" stroke="currentColor" stroke-width="1.6" />
          </svg>
          <span class="visually-hidden">Full screen</span>
        </button>
        <button class="quiet keyboard-button" title="Show the keyboard" @click=${() => this.focusTerminal()}>
          <span aria-hidden="true">⌨</span><span class="visually-hidden">Show the keyboard</span>
        </button>
        <button
          class="quiet"
          aria-pressed=${this.showQuickKeys ? "true" : "false"}
          title="Show or hide the quick keys (Esc, Tab, Ctrl, arrows)"
          @click=${() => {
            this.showQuickKeys = !this.showQuickKeys;
          }}
        >
          Keys
        </button>
      </div>
      <div class="term-scroll">
        <div class="term-host" role="group" aria-label="Terminal (Ctrl+] leaves it)"></div>
      </div>
      ${
        this.showQuickKeys
          ? html`<sa-quick-keys
              .ctrlArmed=${this.ctrlArmed}
              @sa-quick-key=${(e: CustomEvent<QuickKey>) => this.typeText(QUICK_KEYS[e.detail], true)}
              @sa-ctrl-toggle=${() => {
                this.ctrlArmed = !this.ctrlArmed;
              }}
            ></sa-quick-keys>`
          : nothing
      }`;
  }

  private renderState() {
    const c = this.connection;
    let text: string;
    let tone: string;
    let action: unknown = nothing;
    switch (c.kind) {
      case "connecting":
        text = c.attempt === 0 ? "Connecting…" : "Reconnecting…";
        tone = "pending";
        break;
      case "attached":
        text = this.echoMedian > 0 ? `Connected · echo ${Math.round(this.echoMedian)} ms` : "Connected";
        tone = "ok";
        break;
      case "waiting": {
        const seconds = Math.max(0, Math.ceil((c.retryAt - this.now) / 1000));
        text = `Connection lost: ${describeError(c.error)} Reconnecting in ${seconds} s.`;
        tone = "bad";
        action = html`<button @click=${() => this.conn?.reattach()}>Reconnect now</button>`;
        break;
      }
      case "ended":
        text = c.sessionEnded ? "The session ended." : "tmux detached this view.";
        tone = "bad";
        action = c.sessionEnded
          ? nothing
          : html`<button @click=${() => this.restartConnection()}>Attach again</button>`;
        break;
      case "failed":
        text = describeError(c.error);
        tone = "bad";
        action = html`<button @click=${() => this.restartConnection()}>Try again</button>`;
        break;
    }
    const held = this.conn?.pendingInputBytes ?? 0;
    return html`<span class="conn-state tone-${tone}" role="status" aria-live="polite"
        ><span class="conn-dot" aria-hidden="true"></span>${text}${
          held > 0 && c.kind !== "attached"
            ? html` <span class="muted">(typed input waits for the connection)</span>`
            : nothing
        }</span
      >${action}`;
  }

  private renderSize() {
    const w = this.windowSize;
    if (w.cols === 0 || this.connection.kind !== "attached") return nothing;
    if (this.sizeOwner)
      return html`<span class="size-info muted" title="This screen sets the window size">${w.cols}×${w.rows}</span>`;
    const differs = w.cols !== this.fitSize.cols || w.rows !== this.fitSize.rows;
    return html`<span class="size-info muted" title="Another client sets the window size">${w.cols}×${w.rows}, set by another client</span>
      ${differs ? html`<button @click=${() => this.takeOver()}>Take over size</button>` : nothing}`;
  }

  private startConnection(): void {
    if (this.conn || !this.app || !this.sessionName || !this.term) return;
    const term = this.term;
    this.conn = new TerminalConnection({
      client: this.app.hub.terminal,
      name: this.sessionName,
      size: () => this.measureFit(),
      onState: (s) => {
        this.connection = s;
      },
      onInputProblem: (message) => this.app?.toast(message, "error"),
      sink: {
        attached: ({ history, screenLines, windowSize, sizeOwner }) => {
          // A new attachment redraws everything: the pane's history becomes the scrollback and the live
          // output draws the screen, so nothing from an earlier attachment is shown twice.
          // Where a refreshing view is scrolled to now, counted from the bottom.
          const old = term.buffer.active;
          const scrolledUp =
            this.refreshScroll !== undefined && old.type === "normal"
              ? Math.max(this.refreshScroll, old.baseY - old.viewportY)
              : 0;
          this.refreshScroll = undefined;
          term.reset();
          this.applyWindow(windowSize, sizeOwner);
          if (screenLines > 0) {
            const scrollback = scrollbackPart(history, screenLines);
            if (scrollback.length > 0)
              term.write(concat(scrollback, this.encoder.encode(pushIntoScrollback(term.rows))));
          } else if (history.length > 0) {
            term.write(history);
          }
          term.write("", () => {
            // The history's own lines are not new output; then back to where the person was
            // scrolling, counted from the bottom, now with every line.
            this.lineFeedsSinceHistory = 0;
            if (scrolledUp > 0) term.scrollLines(-scrolledUp);
          });
          // The page may have changed size while attaching (a bar appearing, a rotation): ask again
          // for the size it has now if that is not the window's.
          this.requested = windowSize;
          this.scheduleFit();
        },
        output: (data, done) => {
          const keyAt = this.keyAt;
          term.write(data, () => {
            if (keyAt !== undefined && this.keyAt === keyAt) {
              this.keyAt = undefined;
              const sample = performance.now() - keyAt;
              if (sample < ECHO_WINDOW_MS) this.recordEcho(sample);
            }
            done();
          });
        },
        resized: (windowSize, sizeOwner) => this.applyWindow(windowSize, sizeOwner),
      },
    });
    this.conn.start();
  }

  private stopConnection(): void {
    this.conn?.close();
    this.conn = undefined;
  }

  private restartConnection(): void {
    this.stopConnection();
    this.startConnection();
  }

  private applyWindow(size: CellSize, owner: boolean): void {
    this.windowSize = size;
    this.sizeOwner = owner;
    const term = this.term;
    if (!term || size.cols < 1 || size.rows < 1) return;
    if (term.cols !== size.cols || term.rows !== size.rows) term.resize(size.cols, size.rows);
  }

  private measureFit(): CellSize {
    const proposed = this.active ? this.fit?.proposeDimensions() : undefined;
    if (
      proposed &&
      Number.isFinite(proposed.cols) &&
      Number.isFinite(proposed.rows) &&
      proposed.cols > 1 &&
      proposed.rows > 1
    ) {
      this.fitSize = { cols: Math.min(1000, proposed.cols), rows: Math.min(1000, proposed.rows) };
    } else if (this.fitSize.cols === 0) {
      this.fitSize = { cols: 80, rows: 24 };
    }
    return this.fitSize;
  }

  private scheduleFit(): void {
    if (this.resizeTimer !== undefined) return;
    this.resizeTimer = setTimeout(() => {
      this.resizeTimer = undefined;
      requestAnimationFrame(() => this.refit());
    }, RESIZE_SETTLE_MS);
  }

  private refit(): void {
    if (!this.active || !this.term) return;
    const scroller = this.querySelector<HTMLElement>(".term-scroll");
    if (!scroller || scroller.clientWidth === 0 || scroller.clientHeight === 0) return;
    const size = this.measureFit();
    if (size.cols === this.requested.cols && size.rows === this.requested.rows) return;
    this.requested = size;
    if (this.sizeOwner) this.applyWindow(size, true);
    this.conn
      ?.resize(size)
      .catch((err: unknown) => this.app?.toast(`Could not resize the terminal: ${describeError(err)}`, "error"));
  }

  private takeOver(): void {
    const size = this.measureFit();
    this.requested = size;
    this.conn
      ?.resize(size, true)
      .catch((err: unknown) => this.app?.toast(`Could not take over the size: ${describeError(err)}`, "error"));
  }

  private typeText(data: string, fromQuickKey = false): void {
    let text = data;
    if (this.ctrlArmed && !fromQuickKey) {
      text = withCtrl(data);
      this.ctrlArmed = false;
    }
    this.typeBytes(this.encoder.encode(text));
  }

  private typeBytes(bytes: Uint8Array): void {
    if (!this.conn) return;
    this.conn.type(bytes);
    if (this.connection.kind !== "attached") this.requestUpdate();
  }

  private readonly onKeyDownCapture = (e: KeyboardEvent) => {
    if (e.key.length === 1 && !e.ctrlKey && !e.metaKey && !e.altKey) this.keyAt = e.timeStamp;
  };

  /** Keys the terminal does not send: Ctrl+] leaves the terminal, Ctrl+Shift+C/V copy and paste. */
  private onTerminalKey(e: KeyboardEvent): boolean {
    if (e.type !== "keydown") return true;
    if (e.ctrlKey && !e.shiftKey && !e.altKey && (e.key === "]" || e.code === "BracketRight")) {
      e.preventDefault();
      this.term?.blur();
      (this.querySelector(".term-toolbar button") as HTMLElement | null)?.focus();
      return false;
    }
    if (e.ctrlKey && e.shiftKey && (e.key === "C" || e.key === "c")) {
      const selection = this.term?.getSelection() ?? "";
      if (selection !== "") {
        e.preventDefault();
        void copyToClipboard(selection);
      }
      return false;
    }
    if (e.ctrlKey && e.shiftKey && (e.key === "V" || e.key === "v")) return false;
    if (e.shiftKey && e.key === "PageUp") this.refreshScrollback((this.term?.rows ?? 2) - 1);
    return true;
  }

  private async offerCopy(text: string): Promise<void> {
    if (await copyToClipboard(text)) {
      this.pendingCopy = "";
      this.app?.toast("A program in the terminal copied text to your clipboard.");
    } else {
      // Browsers allow writing to the clipboard only right after a person's action: ask for a tap.
      this.pendingCopy = text;
    }
  }

  private async copyPending(): Promise<void> {
    const text = this.pendingCopy;
    if (await copyToClipboard(text)) {
      this.pendingCopy = "";
      this.app?.toast("Copied.");
    } else {
      this.app?.toast("The browser refused to copy. Select the text in the terminal and copy it instead.", "error");
    }
  }

  /**
   * Full screen for the terminal. Where the browser offers the Keyboard Lock API (Chromium), shortcuts
   * such as Ctrl+W, Ctrl+T and Ctrl+N then go to the program instead of closing or opening tabs.
   */
  private async toggleFullscreen(): Promise<void> {
    const keyboard = (navigator as Navigator & { keyboard?: { lock?: () => Promise<void>; unlock?: () => void } })
      .keyboard;
    try {
      if (document.fullscreenElement) {
        keyboard?.unlock?.();
        await document.exitFullscreen();
        return;
      }
      await this.requestFullscreen();
      await keyboard?.lock?.();
    } catch (err) {
      this.app?.toast(
        `Full screen is not available here (${err instanceof Error ? err.message : String(err)}).`,
        "error",
      );
    } finally {
      this.focusTerminal();
    }
  }

  private recordEcho(sample: number): void {
    this.echoSamples.push(sample);
    if (this.echoSamples.length > MAX_ECHO_SAMPLES) this.echoSamples.shift();
    const recent = this.echoSamples.slice(-21).sort((a, b) => a - b);
    this.echoMedian = recent[Math.floor(recent.length / 2)] ?? 0;
  }

  private onVisibility(): void {
    if (document.visibilityState === "hidden") {
      this.hiddenTimer = setTimeout(() => {
        this.hiddenTimer = undefined;
        if (document.visibilityState === "hidden") this.stopConnection();
      }, HIDDEN_DETACH_MS);
      return;
    }
    if (this.hiddenTimer !== undefined) clearTimeout(this.hiddenTimer);
    this.hiddenTimer = undefined;
    if (!this.conn && this.term) this.startConnection();
  }

  /**
   * Scrolling back (wheel, Shift+PageUp, a finger) after new lines arrived: the scrollback may miss
   * lines tmux skipped in a redraw, so the terminal attaches again, which writes the pane's history
   * whole, then returns to the same distance from the bottom. Only in the normal buffer (full-screen
   * programs keep no scrollback), without mouse reporting, when scrolling starts from the bottom, and
   * once per burst of output.
   */
  private refreshScrollback(lines: number): void {
    const term = this.term;
    if (!term || !this.conn || this.refreshScroll !== undefined || this.lineFeedsSinceHistory <= term.rows) return;
    const b = term.buffer.active;
    // Only a start of scrolling back from the bottom: further scrolling reads what is there. With mouse
    // reporting on (tmux's `mouse`, a full-screen program) the wheel goes to the program, not here.
    if (this.connection.kind !== "attached" || b.type !== "normal" || b.viewportY !== b.baseY) return;
    if (term.modes.mouseTrackingMode !== "none") return;
    this.lineFeedsSinceHistory = 0;
    // The view scrolls on meanwhile through the old lines; where it is when the history comes counts.
    this.refreshScroll = lines;
    this.conn.reattach();
  }

  private listen(target: EventTarget, type: string, handler: (e: Event) => void, capture = false): void {
    target.addEventListener(type, handler, { capture, passive: true });
    this.cleanups.push(() => target.removeEventListener(type, handler, { capture }));
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/** True when a DECSET/DECRST names only alternate-screen modes (which are then ignored). */
function isOnlyAltScreen(params: (number | number[])[]): boolean {
  return params.length > 0 && params.every((p) => typeof p === "number" && ALT_SCREEN_MODES.has(p));
}

/** Opens a link from the terminal only when it is http(s), in a new tab without access to this page. */
function openSafeLink(uri: string): void {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return;
  window.open(url.href, "_blank", "noopener,noreferrer");
}

declare global {
  interface HTMLElementTagNameMap {
    "sa-terminal": SaTerminal;
  }
}
