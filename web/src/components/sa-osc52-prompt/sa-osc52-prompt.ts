import { html, nothing } from "lit";
import { property } from "lit/decorators.js";
import { type Osc52Choice, osc52Preview } from "../../terminal/osc52-consent.js";
import { LightElement } from "../base/light-element.js";
import { fire } from "../events.js";

/**
 * Asks whether a program in the terminal may put text on the clipboard (OSC 52), showing the text.
 * Emits `sa-osc52-choice` with `allow` or `deny` on the person's click (a click is also what lets the
 * page write to the clipboard).
 */
export class SaOsc52Prompt extends LightElement {
  /** The text the program asked to copy. */
  @property({ attribute: false }) text = "";

  protected override render() {
    if (this.text === "") return nothing;
    const { shown, more } = osc52Preview(this.text);
    return html`<div class="osc52-prompt" role="alertdialog" aria-labelledby="osc52-title">
      <p id="osc52-title">A program in this session wants to copy this to your clipboard:</p>
      <pre class="osc52-text">${shown}</pre>
      ${more > 0 ? html`<p class="muted">(and ${more} more characters)</p>` : nothing}
      <div class="osc52-actions">
        <button class="primary" type="button" @click=${() => this.choose("allow")}>Allow for this session</button>
        <button type="button" @click=${() => this.choose("deny")}>Never for this session</button>
      </div>
    </div>`;
  }

  private choose(choice: Osc52Choice): void {
    fire(this, "sa-osc52-choice", choice);
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "sa-osc52-prompt": SaOsc52Prompt;
  }
}
