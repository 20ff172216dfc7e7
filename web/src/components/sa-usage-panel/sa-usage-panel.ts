import { timestampDate } from "@bufbuild/protobuf/wkt";
import { html, nothing } from "lit";
import { property } from "lit/decorators.js";
import { ContextWindowSource, type SessionUsage } from "../../../../gen/staragent/v1/session_pb.js";
import { contextPercent, resetText, timeOfDay, tokens } from "../../state/usage-text.js";
import { LightElement } from "../base/light-element.js";

/**
 * The usage of one session, in its view: the model, how much of the context window is used, the
 * conversation's totals, the last turn, the plan's rate limits with their resets, and a banner when
 * the plan's limit was hit (the session then waits for the reset). Renders nothing without usage.
 */
export class SaUsagePanel extends LightElement {
  /** The session's usage; undefined hides the panel. */
  @property({ attribute: false }) usage: SessionUsage | undefined;

  protected override render() {
    const u = this.usage;
    if (!u) return nothing;
    const percent = contextPercent(u);
    const source =
      u.contextWindowSource === ContextWindowSource.LOG ? "as the CLI records it" : "from StarAgent's model table";
    return html`<section class="usage-panel" aria-label="Usage">
      ${
        u.limitReached
          ? html`<p class="usage-limit" role="alert">Usage limit reached${resetText(u) ? html`, resets ${resetText(u)}` : nothing}</p>`
          : nothing
      }
      <dl class="usage-fields">
        <div><dt>Model</dt><dd class="mono">${u.model || "unknown"}${u.reasoningEffort ? html` <span class="muted">(${u.reasoningEffort})</span>` : nothing}</dd></div>
        <div><dt>Context</dt><dd title=${percent === undefined ? "" : `window ${source}`}>${
          percent === undefined
            ? html`${tokens(u.contextTokens)} tokens`
            : html`<span class="usage-context">${percent} %</span> <span class="muted">${tokens(u.contextTokens)} of ${tokens(u.contextWindow)}</span>`
        }</dd></div>
        <div><dt>Last turn</dt><dd>${tokens(u.lastTurnTokens)}</dd></div>
        <div><dt>Total</dt><dd>${
          u.totalsPending
            ? html`<span class="muted">still being counted</span>`
            : html`${tokens(u.totalInputTokens)} in <span class="muted">(${tokens(u.totalCachedTokens)} cached)</span> · ${tokens(u.totalOutputTokens)} out${
                u.totalReasoningTokens > 0n
                  ? html` <span class="muted">(${tokens(u.totalReasoningTokens)} reasoning)</span>`
                  : nothing
              }`
        }</dd></div>
        ${u.costUsd !== undefined ? html`<div><dt>Cost</dt><dd>$${u.costUsd.toFixed(2)}</dd></div>` : nothing}
        ${u.rateLimits.map(
          (r) =>
            html`<div class="usage-rate"><dt>Limit ${r.name}</dt><dd>${Math.round(r.usedPercent)} % used${
              r.resetsTime
                ? html` <span class="muted">· resets ${timeOfDay(timestampDate(r.resetsTime))}</span>`
                : nothing
            }</dd></div>`,
        )}
      </dl>
    </section>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "sa-usage-panel": SaUsagePanel;
  }
}
