import { consume } from "@lit/context";
import { html, nothing, type PropertyValues } from "lit";
import { property, state } from "lit/decorators.js";
import { describeError, isNetworkFailure } from "../../api/errors.js";
import { type AppServices, appContext } from "../../state/app-context.js";
import { nodeId } from "../../state/routes.js";
import { StoreController } from "../../state/store-controller.js";
import type { StreamState } from "../../state/stream-supervisor.js";
import { LightElement } from "../base/light-element.js";
import { fire } from "../events.js";

/**
 * The banner shown while the Hub or a Node cannot be reached: what is wrong, that the dashboard keeps
 * trying (with a countdown), and a way to retry now. Hidden while everything is reachable.
 */
export class SaBanner extends LightElement {
  /** The state of the tab's WatchSessions stream, which says whether the Hub answers. */
  @property({ attribute: false }) hubState: StreamState = { kind: "connecting", attempt: 0 };
  @consume({ context: appContext }) private app?: AppServices;
  @state() private now = Date.now();
  private ticker: ReturnType<typeof setInterval> | undefined;

  constructor() {
    super();
    new StoreController(this, () => (this.app ? [this.app.sessions, this.app.nodes] : []));
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.stopTicker();
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has("hubState")) {
      if (this.hubState.kind === "waiting") this.startTicker();
      else this.stopTicker();
    }
  }

  protected override render() {
    const s = this.hubState;
    const hubDown = s.kind === "waiting" || (s.kind === "connecting" && s.attempt > 0);
    const offline = this.app ? [...this.app.sessions.unreachable].map(nodeId).sort() : [];
    return html`<div class="banner-region" role="status" aria-live="polite">
      ${hubDown ? this.renderHub(s) : nothing}
      ${!hubDown && offline.length > 0 ? this.renderNodes(offline) : nothing}
    </div>`;
  }

  private renderHub(s: StreamState) {
    const seconds = s.kind === "waiting" ? Math.max(0, Math.ceil((s.retryAt - this.now) / 1000)) : 0;
    // The heading already says the Hub cannot be reached; a network failure's own sentence would repeat it.
    const why = s.kind === "waiting" && !isNetworkFailure(s.error) ? describeError(s.error) : "";
    return html`<div class="banner banner-hub">
      <span class="banner-glyph" aria-hidden="true">⚠</span>
      <span class="banner-text"
        ><strong>The StarAgent Hub cannot be reached.</strong>
        ${
          s.kind === "waiting"
            ? html`Retrying in ${seconds} s. <span class="muted">${why}</span>`
            : html`Reconnecting now…`
        }
        Sessions keep running in tmux meanwhile.</span
      >
      <button @click=${() => fire(this, "sa-retry", undefined)}>Retry now</button>
    </div>`;
  }

  private renderNodes(offline: string[]) {
    const info = new Map((this.app?.nodes.nodes ?? []).map((n) => [nodeId(n.name), n]));
    const names = offline.join(", ");
    const detail = offline.length === 1 ? info.get(offline[0] ?? "")?.lastError : "";
    return html`<div class="banner banner-node">
      <span class="banner-glyph" aria-hidden="true">⚠</span>
      <span class="banner-text"
        ><strong>${offline.length === 1 ? `Node ${names} cannot be reached.` : `Nodes ${names} cannot be reached.`}</strong>
        Their sessions show their last known state; the Hub keeps trying.
        ${detail ? html`<span class="muted">${detail}</span>` : nothing}</span
      >
      <a href="/nodes" data-route>Nodes</a>
    </div>`;
  }

  private startTicker(): void {
    if (this.ticker !== undefined) return;
    this.now = Date.now();
    this.ticker = setInterval(() => {
      this.now = Date.now();
    }, 1000);
  }

  private stopTicker(): void {
    if (this.ticker !== undefined) clearInterval(this.ticker);
    this.ticker = undefined;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "sa-banner": SaBanner;
  }
}
