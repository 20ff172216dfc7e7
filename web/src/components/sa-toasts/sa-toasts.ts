import { html } from "lit";
import { state } from "lit/decorators.js";
import { repeat } from "lit/directives/repeat.js";
import { LightElement } from "../base/light-element.js";

/** How long an information message stays; errors stay until dismissed. */
const INFO_TOAST_MS = 5_000;
/** Most messages on screen at once; older ones give way. */
const MAX_TOASTS = 4;

interface Toast {
  readonly id: number;
  readonly message: string;
  readonly tone: "info" | "error";
}

/**
 * Short messages in a live region, so screen readers announce them: confirmations fade after a few
 * seconds, errors stay until dismissed.
 */
export class SaToasts extends LightElement {
  @state() private toasts: Toast[] = [];
  private nextId = 1;

  /** Shows a message. */
  show(message: string, tone: "info" | "error" = "info"): void {
    const toast = { id: this.nextId++, message, tone };
    this.toasts = [...this.toasts.slice(-(MAX_TOASTS - 1)), toast];
    if (tone === "info") setTimeout(() => this.dismiss(toast.id), INFO_TOAST_MS);
  }

  protected override render() {
    return html`<div class="toast-region" aria-live="polite" aria-relevant="additions">
      ${repeat(
        this.toasts,
        (t) => t.id,
        (t) => html`<div class="toast toast-${t.tone}" role=${t.tone === "error" ? "alert" : "status"}>
          <span>${t.message}</span>
          <button class="quiet" aria-label="Dismiss" @click=${() => this.dismiss(t.id)}>✕</button>
        </div>`,
      )}
    </div>`;
  }

  private dismiss(id: number): void {
    this.toasts = this.toasts.filter((t) => t.id !== id);
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "sa-toasts": SaToasts;
  }
}
