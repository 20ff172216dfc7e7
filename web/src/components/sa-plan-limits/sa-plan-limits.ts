import { timestampDate } from "@bufbuild/protobuf/wkt";
import { html, nothing } from "lit";
import { property } from "lit/decorators.js";
import type { Session, SessionUsage } from "../../../../gen/staragent/v1/session_pb.js";
import { resetText, timeOfDay } from "../../state/usage-text.js";
import { LightElement } from "../base/light-element.js";

/** The usage with plan limits that was written last, of a node's sessions (one plan per machine's login). */
export function newestPlanUsage(sessions: Iterable<Session>): SessionUsage | undefined {
  let newest: SessionUsage | undefined;
  let newestMs = -1;
  for (const s of sessions) {
    const u = s.usage;
    if (!u || (u.rateLimits.length === 0 && !u.limitReached)) continue;
    const ms = u.updateTime ? timestampDate(u.updateTime).getTime() : 0;
    if (ms > newestMs) {
      newest = u;
      newestMs = ms;
    }
  }
  return newest;
}

/**
 * A node's plan limits where its CLIs record them (Codex's 5-hour and weekly windows, a hit limit),
 * from the newest of its sessions' usage: how close the machine's login is to being stopped. Renders
 * nothing where no session records them.
 */
export class SaPlanLimits extends LightElement {
  /** The node's sessions. */
  @property({ attribute: false }) sessions: readonly Session[] = [];

  protected override render() {
    const u = newestPlanUsage(this.sessions);
    if (!u) return nothing;
    return html`<div class="plan-limits">
      <span class="plan-limits-title">Plan limits</span>
      ${u.limitReached ? html`<span class="plan-limit-hit">limit reached${resetText(u) ? `, resets ${resetText(u)}` : ""}</span>` : nothing}
      ${u.rateLimits.map(
        (r) =>
          html`<span class="plan-limit">${r.name} ${Math.round(r.usedPercent)} %${
            r.resetsTime
              ? html` <span class="muted">(resets ${timeOfDay(timestampDate(r.resetsTime))})</span>`
              : nothing
          }</span>`,
      )}
    </div>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "sa-plan-limits": SaPlanLimits;
  }
}
