import { html, nothing, type TemplateResult } from "lit";
import { describeError } from "../../api/errors.js";
import type { ClipboardOfferController } from "../../controllers/clipboard-offer.js";
import { QUICK_KEYS } from "../../terminal/keys.js";
import type { CellSize, TerminalState } from "../../terminal/terminal-connection.js";
import type { SaEvent } from "../events.js";

/** What the connection line of a terminal shows. */
export interface StatusView {
  readonly state: TerminalState;
  /** Now, for the reconnect countdown. */
  readonly now: number;
  /** Median keystroke-to-echo in ms (0: none measured). */
  readonly echoMedian: number;
  /** Typed bytes held until the connection is back. */
  readonly heldBytes: number;
  readonly reconnect: () => void;
  readonly restart: () => void;
}

/**
 * The connection state in words, always visible (a live region), with the action that fits it: reconnect
 * now while waiting, attach again after tmux detached this view, try again after a failure.
 */
export function renderConnectionState(v: StatusView): TemplateResult {
  const c = v.state;
  let text: string;
  let tone: string;
  let action: unknown = nothing;
  switch (c.kind) {
    case "connecting":
      text = c.attempt === 0 ? "Connecting…" : "Reconnecting…";
      tone = "pending";
      break;
    case "attached":
      text = v.echoMedian > 0 ? `Connected · echo ${Math.round(v.echoMedian)} ms` : "Connected";
      tone = "ok";
      break;
    case "waiting": {
      const seconds = Math.max(0, Math.ceil((c.retryAt - v.now) / 1000));
      text = `Connection lost: ${describeError(c.error)} Reconnecting in ${seconds} s.`;
      tone = "bad";
      action = html`<button @click=${v.reconnect}>Reconnect now</button>`;
      break;
    }
    case "ended":
      text = c.sessionEnded ? "The session ended." : "tmux detached this view.";
      tone = "bad";
      action = c.sessionEnded ? nothing : html`<button @click=${v.restart}>Attach again</button>`;
      break;
    case "failed":
      text = describeError(c.error);
      tone = "bad";
      action = html`<button @click=${v.restart}>Try again</button>`;
      break;
  }
  return html`<span class="conn-state tone-${tone}" role="status" aria-live="polite"
      ><span class="conn-dot" aria-hidden="true"></span>${text}${
        v.heldBytes > 0 && c.kind !== "attached"
          ? html` <span class="muted">(typed input waits for the connection)</span>`
          : nothing
      }</span
    >${action}`;
}

/** The window's size and who sets it; with another client setting it, "Take over size" when it differs. */
export function renderWindowSize(
  state: TerminalState,
  fit: { readonly windowSize: CellSize; readonly fitSize: CellSize; readonly sizeOwner: boolean },
  takeOver: () => void,
): TemplateResult | typeof nothing {
  const { fitSize, sizeOwner } = fit;
  const w = fit.windowSize;
  if (w.cols === 0 || state.kind !== "attached") return nothing;
  if (sizeOwner)
    return html`<span class="size-info muted" title="This screen sets the window size">${w.cols}×${w.rows}</span>`;
  const differs = w.cols !== fitSize.cols || w.rows !== fitSize.rows;
  return html`<span class="size-info muted" title="Another client sets the window size">${w.cols}×${w.rows}, set by another client</span>
    ${differs ? html`<button @click=${takeOver}>Take over size</button>` : nothing}`;
}

/** A program's copy waiting on the person: the OSC 52 question, or the button that copies with a tap. */
export function renderClipboard(clipboard: ClipboardOfferController): TemplateResult {
  return html`${
    clipboard.asking
      ? html`<sa-osc52-prompt .text=${clipboard.asking} @sa-osc52-choice=${(e: SaEvent<"sa-osc52-choice">) => clipboard.answer(e.detail)}></sa-osc52-prompt>`
      : nothing
  }${
    clipboard.pending
      ? html`<button class="copy-offer" @click=${() => clipboard.copyPending()}>Copy the text the program offered</button>`
      : nothing
  }`;
}

/** The quick-key bar of touch screens (false: not shown): keys phones lack, and a sticky Ctrl. */
export function renderQuickKeys(
  bar: false | { readonly ctrlArmed: boolean; type(text: string): void; toggleCtrl(): void },
): TemplateResult | typeof nothing {
  if (!bar) return nothing;
  return html`<sa-quick-keys
    .ctrlArmed=${bar.ctrlArmed}
    @sa-quick-key=${(e: SaEvent<"sa-quick-key">) => bar.type(QUICK_KEYS[e.detail])}
    @sa-ctrl-toggle=${() => bar.toggleCtrl()}
  ></sa-quick-keys>`;
}

/** What the toolbar's buttons show and do. */
export interface ToolbarButtons {
  readonly fullscreen: boolean;
  readonly quickKeys: boolean;
  toggleFullscreen(): void;
  /** Focuses the terminal, which brings up a phone's keyboard. */
  showKeyboard(): void;
  toggleQuickKeys(): void;
}

/** Full screen, the keyboard (phones), and the quick-key bar's switch. */
export function renderToolbarButtons(b: ToolbarButtons): TemplateResult {
  return html`<button
      class="quiet"
      title="Full screen: browser shortcuts such as Ctrl+W also reach the terminal (Chromium); hold Esc to leave"
      aria-pressed=${b.fullscreen ? "true" : "false"}
      @click=${b.toggleFullscreen}
    >
      <svg class="icon" viewBox="0 0 16 16" aria-hidden="true" focusable="false">
        <path d="M2 6V2h4M10 2h4v4M14 10v4h-4M6 14H2v-4" fill="none" stroke="currentColor" stroke-width="1.6" />
      </svg>
      <span class="visually-hidden">Full screen</span>
    </button>
    <button class="quiet keyboard-button" title="Show the keyboard" @click=${b.showKeyboard}>
      <span aria-hidden="true">⌨</span><span class="visually-hidden">Show the keyboard</span>
    </button>
    <button
      class="quiet"
      aria-pressed=${b.quickKeys ? "true" : "false"}
      title="Show or hide the quick keys (Esc, Tab, Ctrl, arrows)"
      @click=${b.toggleQuickKeys}
    >
      Keys
    </button>`;
}
