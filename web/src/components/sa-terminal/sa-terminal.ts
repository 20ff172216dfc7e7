import "@xterm/xterm/css/xterm.css";
import { consume } from "@lit/context";
import { FitAddon } from "@xterm/addon-fit";
import type { IDisposable, Terminal } from "@xterm/xterm";
import { html, type PropertyValues } from "lit";
import { property, state } from "lit/decorators.js";
import { terminalClient } from "../../api/session-clients.js";
import { ClipboardOfferController } from "../../controllers/clipboard-offer.js";
import { FullscreenController } from "../../controllers/fullscreen.js";
import { IntervalController } from "../../controllers/interval.js";
import { MediaQueryController } from "../../controllers/media-query.js";
import { PageLifecycleController } from "../../controllers/page-lifecycle.js";
import { TerminalFitController } from "../../controllers/terminal-fit.js";
import { type AppServices, appContext } from "../../state/app-context.js";
import { AltScreenGuardAddon } from "../../terminal/addons/alt-screen-guard.js";
import { EchoMeterAddon } from "../../terminal/addons/echo-meter.js";
import { Osc52Addon } from "../../terminal/addons/osc52-addon.js";
import { ScrollbackRefreshAddon } from "../../terminal/addons/scrollback-refresh.js";
import { bufferText, linesScrolledBack } from "../../terminal/buffer.js";
import { copyToClipboard } from "../../terminal/clipboard.js";
import { attachTerminalKeys, createTerminal, followPreferences } from "../../terminal/create-terminal.js";
import { withCtrl } from "../../terminal/keys.js";
import { storageChoices } from "../../terminal/osc52-consent.js";
import { type CellSize, TerminalConnection, type TerminalState } from "../../terminal/terminal-connection.js";
import { xtermSink } from "../../terminal/xterm-sink.js";
import { LightElement } from "../base/light-element.js";
import {
  renderClipboard,
  renderConnectionState,
  renderQuickKeys,
  renderToolbarButtons,
  renderWindowSize,
} from "./terminal-status.js";

/** A hidden tab lets go of its terminal after this long (browsers allow few connections per host). */
const HIDDEN_DETACH_MS = 60_000;
/** The person's OSC 52 answers, per session, kept in this origin's storage. */
const OSC52_CHOICES = storageChoices(globalThis.localStorage);
/** How often the "Reconnecting in N s" countdown is redrawn. */
const COUNTDOWN_TICK_MS = 1_000;

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
  @state() private ctrlArmed = false;

  private readonly coarsePointer = new MediaQueryController(this, "(pointer: coarse)", (coarse) => {
    this.showQuickKeys = coarse;
  });
  @state() private showQuickKeys = this.coarsePointer.matches;

  private readonly fitter = new TerminalFitController(this, {
    terminal: () => (this.term && this.fit ? { term: this.term, fit: this.fit } : undefined),
    active: () => this.active,
    scroller: () => this.querySelector<HTMLElement>(".term-scroll"),
    requestSize: (size, takeOver) => this.conn?.resize(size, takeOver),
    onError: (message) => this.app?.toast(message, "error"),
  });
  private readonly fullscreen = new FullscreenController(this, {
    onChange: () => this.fitter.schedule(),
    onError: (message) => this.app?.toast(message, "error"),
    after: () => this.focusTerminal(),
  });
  private readonly clipboard = new ClipboardOfferController(this, {
    copy: copyToClipboard,
    toast: (message, tone) => this.app?.toast(message, tone),
    session: () => this.sessionName,
    choices: OSC52_CHOICES,
  });

  private term: Terminal | undefined;
  private fit: FitAddon | undefined;
  private echo: EchoMeterAddon | undefined;
  private scrollback: ScrollbackRefreshAddon | undefined;
  /** A focus request that came before the terminal existed. */
  private focusWhenReady = false;
  private conn: TerminalConnection | undefined;
  /** What lasts exactly as long as the terminal: its addons' and event subscriptions. */
  private readonly disposables: IDisposable[] = [];
  private readonly encoder = new TextEncoder();

  constructor() {
    super();
    new IntervalController(this, COUNTDOWN_TICK_MS, () => this.connection.kind === "waiting");
    new PageLifecycleController(this, {
      hiddenReleaseMs: HIDDEN_DETACH_MS,
      onHiddenLong: () => this.stopConnection(),
      onVisible: () => void (!this.conn && this.term && this.startConnection()),
      onPageHide: () => this.stopConnection(),
      onPageRestore: () => void (!this.conn && this.startConnection()),
    });
  }

  /** Milliseconds from a key press to its echo being written into the terminal, newest last. */
  get echoSamples(): readonly number[] {
    return this.echo?.samples ?? [];
  }

  /** Every line of the terminal's buffer (scrollback and screen) as text. */
  bufferText(): string {
    return bufferText(this.term);
  }

  /** How many lines above the bottom the view is scrolled (0: following the output). */
  linesScrolledBack(): number {
    return linesScrolledBack(this.term);
  }

  /** The terminal's size in cells (the window's size when another client sets it). */
  terminalSize(): CellSize {
    return { cols: this.term?.cols ?? 0, rows: this.term?.rows ?? 0 };
  }

  /** The terminal's font size in CSS pixels now (smaller while another client's wider window is fitted). */
  terminalFont(): number {
    return this.term?.options.fontSize ?? 0;
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
    // Disposing the terminal disposes its addons too.
    for (const d of this.disposables.splice(0)) d.dispose();
    this.term?.dispose();
    this.term = undefined;
  }

  protected override firstUpdated(): void {
    this.setUp();
  }

  /** Creates the terminal in the rendered host, loads its addons, and attaches. */
  private setUp(): void {
    const host = this.querySelector<HTMLElement>(".term-host");
    const scroller = this.querySelector<HTMLElement>(".term-scroll");
    const app = this.app;
    if (!host || !scroller) return;
    const term = createTerminal(app?.preferences);
    this.fit = new FitAddon();
    this.echo = new EchoMeterAddon(host, () => this.requestUpdate());
    this.scrollback = new ScrollbackRefreshAddon({
      element: host,
      isAttached: () => this.conn !== undefined && this.connection.kind === "attached",
      reattach: () => this.conn?.reattach(),
    });
    for (const addon of [
      this.fit,
      this.echo,
      this.scrollback,
      new AltScreenGuardAddon(),
      new Osc52Addon((text) => this.clipboard.request(text)),
    ]) {
      term.loadAddon(addon);
    }
    term.open(host);
    this.term = term;
    if (this.focusWhenReady) {
      this.focusWhenReady = false;
      const at = document.activeElement;
      if (!at || at === document.body || this.contains(at) || this.closest(".tab-panel") === at) term.focus();
    }
    this.disposables.push(
      term.onData((data) => this.typeText(data)),
      term.onBinary((data) => this.typeBytes(Uint8Array.from(data, (c) => c.charCodeAt(0) & 0xff))),
    );
    attachTerminalKeys(term, {
      leave: () => {
        term.blur();
        this.querySelector<HTMLElement>(".term-toolbar button")?.focus();
      },
      pageUp: () => this.scrollback?.refresh(term.rows - 1),
    });
    this.fitter.observe(scroller);
    if (app) {
      const wake = app.subscribeWake(() => this.conn?.reattach());
      this.disposables.push(followPreferences(term, app.preferences), { dispose: wake });
    }
    this.fitter.measure();
    this.startConnection();
  }

  protected override updated(changed: PropertyValues<this>): void {
    if (changed.has("active") && this.active) this.fitter.schedule();
  }

  protected override render() {
    return html`<div class="term-toolbar">
        ${renderConnectionState({
          state: this.connection,
          now: Date.now(),
          echoMedian: this.echo?.median ?? 0,
          heldBytes: this.conn?.pendingInputBytes ?? 0,
          reconnect: () => this.conn?.reattach(),
          restart: () => this.restartConnection(),
        })}
        <span class="spacer"></span>
        ${renderWindowSize(this.connection, this.fitter, () => this.fitter.takeOver())}
        ${renderClipboard(this.clipboard)}
        ${renderToolbarButtons({
          fullscreen: this.fullscreen.active,
          quickKeys: this.showQuickKeys,
          toggleFullscreen: () => void this.fullscreen.toggle(),
          showKeyboard: () => this.focusTerminal(),
          toggleQuickKeys: () => (this.showQuickKeys = !this.showQuickKeys),
        })}
      </div>
      <div class="term-scroll">
        <div class="term-host" role="group" aria-label="Terminal (Ctrl+] leaves it)"></div>
      </div>
      ${renderQuickKeys(
        this.showQuickKeys && {
          ctrlArmed: this.ctrlArmed,
          type: (text) => this.typeText(text, true),
          toggleCtrl: () => (this.ctrlArmed = !this.ctrlArmed),
        },
      )}`;
  }

  private startConnection(): void {
    const { term, echo, scrollback } = this;
    if (this.conn || !this.app || !this.sessionName || !term || !echo || !scrollback) return;
    this.conn = new TerminalConnection({
      client: terminalClient(this.app.hub),
      name: this.sessionName,
      size: () => this.fitter.measure(),
      onState: (s) => (this.connection = s),
      onInputProblem: (message) => this.app?.toast(message, "error"),
      sink: xtermSink(term, {
        scrollback,
        echo,
        applyWindow: (size, owner) => this.fitter.applyWindow(size, owner),
        attached: (size, owner) => this.fitter.attached(size, owner),
      }),
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
}

declare global {
  interface HTMLElementTagNameMap {
    "sa-terminal": SaTerminal;
  }
}
