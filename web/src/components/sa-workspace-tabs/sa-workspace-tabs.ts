import { html, nothing } from "lit";
import { property, state } from "lit/decorators.js";
import { keyed } from "lit/directives/keyed.js";
import type { Session } from "../../../../gen/staragent/v1/session_pb.js";
import { type SessionTab, sessionPath } from "../../state/routes.js";
import { LightElement } from "../base/light-element.js";

/** The Changes and Files tab links of a session, beside Terminal and Chat; Changes shows the count. */
export function workspaceTabs(s: Session, tab: SessionTab) {
  const count = s.changedFiles ? html` <span class="tab-count">${s.changedFiles}</span>` : nothing;
  return html`<a href=${sessionPath(s.node, s.tmuxSession, "changes")} data-route aria-current=${tab === "changes" ? "page" : "false"}>Changes${count}</a>
    <a href=${sessionPath(s.node, s.tmuxSession, "files")} data-route aria-current=${tab === "files" ? "page" : "false"}>Files</a>`;
}

/** The panels of the Changes and Files tabs, mounted once first shown (like Chat). */
export function workspacePanels(s: Session, tab: SessionTab, mounted: ReadonlySet<SessionTab>) {
  return html`${(["changes", "files"] as const).map(
    (kind) => html`<div class="tab-panel" ?hidden=${tab !== kind}>
      ${mounted.has(kind) ? keyed(s.name, html`<sa-workspace-panel .kind=${kind} .session=${s} .active=${tab === kind}></sa-workspace-panel>`) : nothing}
    </div>`,
  )}`;
}

/**
 * Loads the Changes or Files view's code when its tab first opens (a dynamic import, with the
 * highlighter, the diff and Markdown libraries), so the session list's bundle does not grow by them.
 */
export class SaWorkspacePanel extends LightElement {
  @property({ attribute: false }) kind: "changes" | "files" = "changes";
  @property({ attribute: false }) session?: Session;
  @property({ attribute: false }) active = false;
  @state() private code: "loading" | "ready" | "failed" = "loading";

  override connectedCallback(): void {
    super.connectedCallback();
    const load =
      this.kind === "changes" ? import("../sa-changes-view/define.js") : import("../sa-files-view/define.js");
    load.then(
      () => {
        this.code = "ready";
      },
      () => {
        this.code = "failed";
      },
    );
  }

  protected override render() {
    if (this.code === "failed") {
      return html`<div class="empty-state"><p>This view could not be loaded. Reload the page to try again.</p></div>`;
    }
    if (this.code === "loading" || !this.session)
      return html`<div class="empty-state" role="status"><p>Loading…</p></div>`;
    return this.kind === "changes"
      ? html`<sa-changes-view .session=${this.session} .active=${this.active}></sa-changes-view>`
      : html`<sa-files-view .session=${this.session} .active=${this.active}></sa-files-view>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "sa-workspace-panel": SaWorkspacePanel;
  }
}
