import { html, nothing } from "lit";
import { property } from "lit/decorators.js";
import type { SessionUsage } from "../../../../gen/staragent/v1/session_pb.js";
import { contextPercent, tokens } from "../../state/usage-text.js";
import { LightElement } from "../base/light-element.js";

/**
 * A small meter of how full a session's context is, for its row in the list: people running many
 * agents want to see which one is about to compact or forget. Renders nothing for a session whose CLI
 * records no usage (shells), and "limit" when the plan's limit was hit.
 */
export class SaContextMeter extends LightElement {
  /** The session's usage; undefined hides the meter. */
  @property({ attribute: false }) usage: SessionUsage | undefined;

  protected override render() {
    const u = this.usage;
    if (!u) return nothing;
    if (u.limitReached) return html`<span class="context-meter context-limit" title="usage limit reached">limit</span>`;
    const percent = contextPercent(u);
    const label =
      percent === undefined
        ? `${tokens(u.contextTokens)} tokens of context`
        : `${percent} % of context used (${tokens(u.contextTokens)} of ${tokens(u.contextWindow)})`;
    return html`<span class="context-meter ${percent !== undefined && percent >= 80 ? "context-high" : ""}" role="meter"
      aria-label="context" aria-valuemin="0" aria-valuemax="100" aria-valuenow=${percent ?? nothing} title=${label}
      >${percent === undefined ? nothing : html`<span class="context-bar"><span class="context-fill" style="width: ${percent}%"></span></span>`}<span class="context-value">${percent === undefined ? tokens(u.contextTokens) : `${percent}%`}</span></span
    >`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "sa-context-meter": SaContextMeter;
  }
}
