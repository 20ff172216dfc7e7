import { html } from "lit";
import { property } from "lit/decorators.js";
import type { QuickKey } from "../../terminal/keys.js";
import { LightElement } from "../base/light-element.js";
import { fire } from "../events.js";

/** Delay before a held arrow key starts repeating, and the repeat interval (like a keyboard's). */
const REPEAT_DELAY_MS = 450;
const REPEAT_INTERVAL_MS = 60;

const KEYS: ReadonlyArray<{ key: QuickKey; label: string; name: string; repeat?: boolean }> = [
  { key: "Esc", label: "Esc", name: "Escape" },
  { key: "Tab", label: "Tab", name: "Tab" },
  { key: "Ctrl-C", label: "^C", name: "Control C" },
  { key: "Ctrl-D", label: "^D", name: "Control D" },
  { key: "Left", label: "←", name: "Left arrow", repeat: true },
  { key: "Up", label: "↑", name: "Up arrow", repeat: true },
  { key: "Down", label: "↓", name: "Down arrow", repeat: true },
  { key: "Right", label: "→", name: "Right arrow", repeat: true },
  { key: "Enter", label: "⏎", name: "Enter" },
];

/**
 * The keys phones lack (Esc, Tab, Ctrl-C, Ctrl-D, arrows, Enter, and a sticky Ctrl for the next key),
 * in a bar at the bottom of the terminal, which sits above the on-screen keyboard because the app is laid
 * out from the visual viewport. The buttons never take the focus (pointer-down is cancelled and they are
 * out of the tab order), so the keyboard stays open while they are tapped. Arrows repeat while held.
 */
export class SaQuickKeys extends LightElement {
  /** Whether the sticky Ctrl is on (the terminal applies it to the next typed key). */
  @property({ attribute: false }) ctrlArmed = false;
  private repeatTimer: ReturnType<typeof setTimeout> | undefined;

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.stopRepeat();
  }

  protected override render() {
    return html`<div class="quick-keys" role="toolbar" aria-label="Quick keys">
      <button
        tabindex="-1"
        class="qk qk-ctrl"
        aria-pressed=${this.ctrlArmed ? "true" : "false"}
        aria-label="Control (applies to the next key)"
        @pointerdown=${this.keepFocus}
        @click=${() => fire(this, "sa-ctrl-toggle", undefined)}
      >
        Ctrl
      </button>
      ${KEYS.map(
        (k) => html`<button
          tabindex="-1"
          class="qk"
          aria-label=${k.name}
          data-key=${k.key}
          @pointerdown=${(e: PointerEvent) => this.press(e, k.key, k.repeat === true)}
          @pointerup=${this.stopRepeat}
          @pointercancel=${this.stopRepeat}
          @pointerleave=${this.stopRepeat}
          @click=${(e: MouseEvent) => {
            // Pointer presses were sent on pointer-down; a click without one comes from a keyboard or
            // assistive technology.
            if (e.detail === 0) fire(this, "sa-quick-key", k.key);
          }}
        >
          ${k.label}
        </button>`,
      )}
    </div>`;
  }

  private readonly keepFocus = (e: PointerEvent) => {
    e.preventDefault();
  };

  private press(e: PointerEvent, key: QuickKey, repeat: boolean): void {
    e.preventDefault();
    fire(this, "sa-quick-key", key);
    if (!repeat) return;
    this.stopRepeat();
    const again = () => {
      fire(this, "sa-quick-key", key);
      this.repeatTimer = setTimeout(again, REPEAT_INTERVAL_MS);
    };
    this.repeatTimer = setTimeout(again, REPEAT_DELAY_MS);
  }

  private readonly stopRepeat = () => {
    if (this.repeatTimer !== undefined) clearTimeout(this.repeatTimer);
    this.repeatTimer = undefined;
  };
}

declare global {
  interface HTMLElementTagNameMap {
    "sa-quick-keys": SaQuickKeys;
  }
}
