import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { consume } from "@lit/context";
import { html, nothing, type PropertyValues } from "lit";
import { property, state } from "lit/decorators.js";
import { keyed } from "lit/directives/keyed.js";
import {
  type Session,
  SessionOrigin,
  SessionStatus,
  SessionType,
  StatusReason,
} from "../../../../gen/staragent/v1/session_pb.js";
import { describeError } from "../../api/errors.js";
import { type AppServices, appContext } from "../../state/app-context.js";
import { pageIsVisible } from "../../state/attention.js";
import { type SessionTab, sessionName, sessionPath } from "../../state/routes.js";
import { cliName, originText, reasonText, relativeTime, statusLook, stopPolicy } from "../../state/session-labels.js";
import { StoreController } from "../../state/store-controller.js";
import { visibleText } from "../../util/visible-text.js";
import { LightElement } from "../base/light-element.js";
import { fire } from "../events.js";
import { workspacePanels, workspaceTabs } from "../sa-workspace-tabs/sa-workspace-tabs.js";

/** `text` as one shell word, for a command shown to be copied. */
function shellQuote(text: string): string {
  return `'${text.replace(/'/g, "'\\''")}'`;
}

/** A name a session could be renamed to so StarAgent can manage it: its other characters become '-'. */
function suggestedName(name: string): string {
  const clean = name
    .replace(/[^A-Za-z0-9_-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 64);
  return clean === "" ? "my-session" : clean;
}

/**
 * One session: its status and what it waits for, its live terminal and its chat (tabs), and Stop when
 * allowed. Opening a session whose finished turn is unseen marks it seen, but only while the page is
 * visible, so a background tab never clears a review nobody looked at. The terminal stays attached
 * while the chat tab is shown, so switching tabs loses nothing.
 */
export class SaSessionView extends LightElement {
  /** The node id. */
  @property({ attribute: false }) node = "";
  /** The tmux session name. */
  @property({ attribute: false }) sessionId = "";
  /** The tab shown. */
  @property({ attribute: false }) tab: SessionTab = "terminal";
  /** Where the focus was when this page was asked for: the focus moves in only if it is still there. */
  @property({ attribute: false }) openedFrom: unknown;

  @consume({ context: appContext }) private app?: AppServices;
  @state() private terminalCode: "missing" | "loading" | "ready" | "failed" = "missing";
  private mounted = new Set<SessionTab>();
  private mountedFor = "";
  private markedCompletion = "";
  /** Where the focus was when focusTab found nothing to focus yet (undefined: nothing pending). */
  private focusPendingFrom: Element | null | undefined;
  private readonly onVisibility = () => this.maybeMarkSeen();

  constructor() {
    super();
    new StoreController(this, () => (this.app ? [this.app.sessions] : []));
  }

  private get name(): string {
    return sessionName(this.node, this.sessionId);
  }

  private get session(): Session | undefined {
    return this.app?.sessions.get(this.name);
  }

  override connectedCallback(): void {
    super.connectedCallback();
    document.addEventListener("visibilitychange", this.onVisibility);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    document.removeEventListener("visibilitychange", this.onVisibility);
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (this.mountedFor !== this.name) {
      this.mountedFor = this.name;
      this.mounted = new Set();
    }
    this.mounted.add(this.tab);
    if (this.tab === "terminal" && this.terminalCode === "missing") void this.loadTerminal();
    if (changed.has("tab") || changed.has("sessionId")) {
      // Keep focus where the person works: the terminal or the composer. Unless the person moved it
      // since asking for this page (this view's code arrived late, and they went to the menu): a key
      // meant for the menu must not reach the agent.
      void this.updateComplete.then(() => {
        const at = document.activeElement;
        if (!at || at === document.body || at === this.openedFrom || this.contains(at)) this.focusTab();
      });
    }
  }

  protected override updated(): void {
    this.maybeMarkSeen();
    if (this.focusPendingFrom !== undefined && document.activeElement === this.focusPendingFrom) this.focusTab();
    else this.focusPendingFrom = undefined;
  }

  protected override render() {
    const s = this.session;
    const loaded = this.app?.sessions.loaded ?? false;
    if (!s) {
      return html`<div class="session-header">${this.backLink()}</div>
        <div class="empty-state">
          ${
            loaded
              ? html`<h2>This session does not exist</h2>
                  <p><code>${this.sessionId}</code> is not a tmux session on node <code>${this.node}</code> (any more).</p>
                  <p><a href="/" data-route>Back to all sessions</a></p>`
              : html`<p role="status">Loading…</p>`
          }
        </div>`;
    }
    const look = statusLook(s.status);
    const stop = s.unmanageableReason === "" ? stopPolicy(s) : "never";
    const time = s.lastActivityTime ? timestampDate(s.lastActivityTime) : undefined;
    return html`
      <div class="session-header">
        ${this.backLink()}
        <div class="session-title">
          <h1><span class="visually-hidden">Session </span>${visibleText(s.tmuxSession)}</h1>
          <span class="status tone-${look.tone}" aria-live="polite"><span class="glyph" aria-hidden="true">${look.glyph}</span>${look.word}</span>
        </div>
        <p class="session-reason ${s.status === SessionStatus.REVIEW ? "reason-review" : "muted"}">${reasonText(s)}</p>
        <p class="session-meta muted">
          <span>${cliName(s.cli)}</span><span aria-hidden="true"> · </span><span>node ${s.node}</span
          ><span aria-hidden="true"> · </span><span class="mono session-cwd">${visibleText(s.cwd)}</span>
          ${time ? html`<span aria-hidden="true"> · </span><span>active ${relativeTime(time)}</span>` : nothing}
          ${s.worktree ? html`<span class="tag session-worktree" title=${`git worktree of ${visibleText(s.worktree.repositoryRoot)}`}>worktree · ${visibleText(s.worktree.branch)}</span>` : nothing}
          ${s.origin !== SessionOrigin.CREATED ? html`<span class="tag">${originText(s.origin)}</span>` : nothing}
          ${s.nodeUnreachable ? html`<span class="tag tag-offline">node unreachable</span>` : nothing}
        </p>
        <sa-usage-panel .usage=${s.usage}></sa-usage-panel>
        <div class="session-bar">
          ${
            s.unmanageableReason !== ""
              ? nothing
              : html`<nav class="tabs" aria-label="Session views">
                  <a href=${sessionPath(s.node, s.tmuxSession)} data-route aria-current=${this.tab === "terminal" ? "page" : "false"}>Terminal</a>
                  <a href=${sessionPath(s.node, s.tmuxSession, "chat")} data-route aria-current=${this.tab === "chat" ? "page" : "false"}>Chat</a>
                  ${s.type === SessionType.SYSTEM ? nothing : workspaceTabs(s, this.tab)}
                </nav>`
          }
          <span class="spacer"></span>
          ${
            stop === "never"
              ? nothing
              : html`<button class="stop-button" @click=${() => fire(this, "sa-stop-session", s)}>Stop…</button>`
          }
        </div>
      </div>
      ${
        s.unmanageableReason !== ""
          ? html`<div class="session-body"><div class="empty-state unmanageable" role="note">
              <h2>StarAgent cannot manage this session</h2>
              <p>${s.unmanageableReason}.</p>
              <p>For example: <code>tmux rename-session -t ${shellQuote(`=${s.tmuxSession}`)} ${suggestedName(s.tmuxSession)}</code></p>
            </div></div>`
          : this.renderBody(s)
      }
    `;
  }

  private renderBody(s: Session) {
    return html`
      <sa-prompt-card .session=${s}></sa-prompt-card>
      <div class="session-body">
        <div class="tab-panel terminal-panel" tabindex="-1" ?hidden=${this.tab !== "terminal"}>
          ${this.mounted.has("terminal") ? this.renderTerminal(s) : nothing}
        </div>
        <div class="tab-panel" ?hidden=${this.tab !== "chat"}>
          ${this.mounted.has("chat") ? keyed(s.name, html`<sa-chat-view .session=${s} .active=${this.tab === "chat"}></sa-chat-view>`) : nothing}
        </div>
        ${workspacePanels(s, this.tab, this.mounted)}
      </div>
    `;
  }

  private renderTerminal(s: Session) {
    if (this.terminalCode === "failed") {
      return html`<div class="empty-state">
        <p>The terminal could not be loaded. Reload the page to try again.</p>
      </div>`;
    }
    if (this.terminalCode !== "ready")
      return html`<div class="empty-state" role="status"><p>Opening the terminal…</p></div>`;
    return keyed(
      s.name,
      html`<sa-terminal .sessionName=${s.name} .system=${s.type === SessionType.SYSTEM} .active=${this.tab === "terminal"}></sa-terminal>`,
    );
  }

  private backLink() {
    return html`<a class="back-link" href="/" data-route><span aria-hidden="true">←</span> All sessions</a>`;
  }

  private async loadTerminal(): Promise<void> {
    this.terminalCode = "loading";
    try {
      await import("../sa-terminal/define.js");
      this.terminalCode = "ready";
    } catch {
      this.terminalCode = "failed";
      return;
    }
    // The session was opened while the terminal's code loaded: the focus waits on its panel (see
    // focusTab) and moves into the terminal now, unless the person moved it elsewhere meanwhile.
    await this.updateComplete;
    if (this.tab === "terminal" && document.activeElement === this.querySelector(".terminal-panel")) this.focusTab();
  }

  /**
   * Keeps the focus where the person works once a session or tab opens: the terminal or the composer,
   * every time. Before the terminal exists, its panel takes the focus, so keys meant for the list never
   * stay in the list on one open and reach the agent on the next.
   */
  private focusTab(): void {
    const panel = this.querySelector<HTMLElement>(
      this.tab === "terminal" ? ".terminal-panel" : "sa-chat-composer textarea",
    );
    if (!panel) {
      // The session is not shown yet (a reload, or one just created from the dialog while the list
      // catches up): the focus moves once it is, unless the person moved it meanwhile.
      this.focusPendingFrom = document.activeElement;
      return;
    }
    this.focusPendingFrom = undefined;
    panel.focus({ preventScroll: true });
    if (this.tab === "terminal")
      (this.querySelector("sa-terminal") as (HTMLElement & { focusTerminal(): void }) | null)?.focusTerminal();
  }

  /** Marks the newest finished turn seen while the page is visible (once per turn). */
  private maybeMarkSeen(): void {
    const s = this.session;
    const app = this.app;
    if (!s || !app || s.nodeUnreachable || s.unmanageableReason !== "") return;
    if (s.status !== SessionStatus.REVIEW || s.statusReason !== StatusReason.UNSEEN_COMPLETION || !s.completionId)
      return;
    if (!pageIsVisible()) return;
    const key = `${s.name}|${s.completionId}`;
    if (this.markedCompletion === key) return;
    this.markedCompletion = key;
    app.hub.sessions.markSessionSeen({ name: s.name, completionId: s.completionId }).catch((err: unknown) => {
      // A newer turn finished meanwhile (the page was stale): the next update marks that one.
      if (err instanceof ConnectError && err.code === Code.FailedPrecondition) return;
      this.markedCompletion = "";
      app.toast(`Could not mark ${s.tmuxSession} as seen: ${describeError(err)}`, "error");
    });
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "sa-session-view": SaSessionView;
  }
}
