import { Code, ConnectError } from "@connectrpc/connect";
import { consume } from "@lit/context";
import { html, nothing, type PropertyValues } from "lit";
import { property, state } from "lit/decorators.js";
import { repeat } from "lit/directives/repeat.js";
import {
  type ChatMessage,
  ChatMessageSource,
  ChatRole,
  type Session,
  SessionStatus,
  SessionType,
  StatusReason,
} from "../../../../gen/staragent/v1/session_pb.js";
import { describeError, isCancelled } from "../../api/errors.js";
import { type AppServices, appContext } from "../../state/app-context.js";
import { sessionPath } from "../../state/routes.js";
import { cliName, reasonText } from "../../state/session-labels.js";
import { linkify } from "../../util/linkify.js";
import { LightElement } from "../base/light-element.js";

/** Lines of tmux history the chat is parsed from. */
const CHAT_HISTORY_LINES = 3_000;
/** Distance from the bottom (px) within which the view keeps following new messages. */
const FOLLOW_SLACK_PX = 48;
/** Tool output longer than this many lines starts folded. */
const FOLD_TOOL_LINES = 12;
/**
 * Messages per page read from the session's log: the newest page on opening, then one more page each
 * time the person scrolls to the top. Enough to fill a tall screen; small enough to answer at once.
 */
export const CHAT_PAGE_SIZE = 50;
/** Distance from the top (px) at which the next older page is read. */
const OLDER_PAGE_SLACK_PX = 120;

/** Why chat is off for system sessions, shown instead of the conversation and in the composer. */
export const SYSTEM_CHAT_REASON =
  "Chat is off for system sessions: they run StarAgent's own services (the Hub, a Node, tailscaled), not an agent. Use the Terminal tab.";

/**
 * A session's conversation as messages (the person, the agent, tools with their command or file, and
 * notices), derived by the Hub from the CLI's own log and the live screen. It opens on the newest page
 * and reads older pages as the person scrolls up (keeping what is on screen in place), and follows the
 * session: when the session's `chat_revision` changes (pushed by WatchSessions) only what changed is
 * fetched, with the chat cursor. The view keeps to the bottom unless the person scrolled up. All text
 * is shown as text.
 */
export class SaChatView extends LightElement {
  /** The session (from the store; updated as it changes). */
  @property({ attribute: false }) session: Session | undefined;
  /** Whether the chat tab is shown. */
  @property({ attribute: false }) active = true;

  @consume({ context: appContext }) private app?: AppServices;
  @state() private messages: ChatMessage[] = [];
  @state() private loaded = false;
  @state() private error = "";
  @state() private unseenBelow = false;
  /** Whether older messages than the first shown exist, and the token that reads them. */
  @state() private hasOlder = false;
  @state() private loadingOlder = false;
  private olderToken = "";
  private cursor = "";
  /** The session's chat_revision when the newest fetch started: a different one means fetch again. */
  private requestedRevision: string | undefined;
  private fetching = false;
  private wantAgain = false;
  private following = true;
  private abort: AbortController | undefined;

  private get isSystem(): boolean {
    return this.session?.type === SessionType.SYSTEM;
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.abort?.abort();
  }

  protected override willUpdate(changed: PropertyValues): void {
    const s = this.session;
    if (!s || this.isSystem) return;
    if (changed.has("session") && s.chatRevision !== this.requestedRevision) void this.refresh();
  }

  protected override updated(changed: PropertyValues): void {
    if (changed.has("messages") || (changed.has("active") && this.active)) {
      const list = this.querySelector<HTMLElement>(".chat-log");
      if (list && this.following) list.scrollTop = list.scrollHeight;
    }
  }

  protected override render() {
    const s = this.session;
    if (!s) return nothing;
    if (this.isSystem) {
      return html`<div class="chat-log"><div class="empty-state chat-off"><p>${SYSTEM_CHAT_REASON}</p></div></div>
        <sa-chat-composer .sessionName=${s.name} .disabledReason=${SYSTEM_CHAT_REASON}></sa-chat-composer>`;
    }
    const logged = this.messages.some((m) => m.source === ChatMessageSource.LOG);
    return html`<div class="chat-log" role="log" aria-label="Conversation with ${s.tmuxSession}" @scroll=${this.onScroll}>
        ${this.error ? html`<p class="chat-error" role="alert">${this.error} <button @click=${() => this.refresh(true)}>Try again</button></p>` : nothing}
        ${
          this.hasOlder
            ? html`<div class="chat-older">
                <button class="secondary" ?disabled=${this.loadingOlder} @click=${() => this.loadOlder()}>
                  ${this.loadingOlder ? "Reading earlier messages…" : "Show earlier messages"}
                </button>
              </div>`
            : nothing
        }
        ${
          !this.loaded && !this.error
            ? html`<p class="empty-state" role="status">Reading the conversation…</p>`
            : this.loaded && this.messages.length === 0
              ? html`<div class="empty-state">
                  <h2>No messages yet</h2>
                  <p>Write to ${cliName(s.cli)} below: it is typed into the session as one message.</p>
                </div>`
              : nothing
        }
        ${repeat(
          this.messages,
          (m) => m.id,
          (m) => this.renderMessage(m, s, logged),
        )}
      </div>
      ${
        this.unseenBelow
          ? html`<button class="new-below" @click=${() => this.scrollToEnd()}>New messages <span aria-hidden="true">↓</span></button>`
          : nothing
      }
      ${
        s.status === SessionStatus.REVIEW && s.statusReason === StatusReason.INPUT_PROMPT
          ? html`<p class="chat-waiting" role="status">
              <span class="glyph" aria-hidden="true">◆</span>
              <span><strong>${reasonText(s)}</strong><br />The agent waits for your answer on its screen:
              <a href=${sessionPath(s.node, s.tmuxSession)} data-route>answer in the Terminal</a>.</span>
            </p>`
          : nothing
      }
      <sa-chat-composer .sessionName=${s.name} .disabledReason=${""}></sa-chat-composer>`;
  }

  /**
   * One message. `logged`: the chat comes from the CLI's log, so a prompt read only off the screen is
   * marked as not logged yet (for programs without a log every message is from the screen: no mark).
   */
  private renderMessage(m: ChatMessage, s: Session, logged: boolean) {
    switch (m.role) {
      case ChatRole.USER:
        return html`<article class="msg msg-user" aria-label="You" data-id=${m.id}>
          <div class="msg-role">You${
            logged && m.source === ChatMessageSource.SCREEN
              ? html` <span class="msg-pending" title="On screen; not in the CLI's log yet">· on screen</span>`
              : nothing
          }</div>
          <div class="msg-text">${linkify(m.text)}</div>
        </article>`;
      case ChatRole.ASSISTANT:
        return html`<article class="msg msg-assistant" aria-label=${cliName(s.cli)} data-id=${m.id}>
          <div class="msg-role">${cliName(s.cli)}</div>
          <div class="msg-text">${linkify(m.text)}</div>
        </article>`;
      case ChatRole.TOOL: {
        const lines = m.text.split("\n").length;
        const head = html`<span class="tool-name">${m.toolName || "Tool"}</span>${
          m.toolTarget ? html` <code class="tool-target">${m.toolTarget}</code>` : nothing
        }`;
        return html`<article class="msg msg-tool" aria-label="Tool ${m.toolName}" data-id=${m.id}>
          ${
            m.text.trim() === ""
              ? html`<div class="tool-head">${head}</div>`
              : html`<details ?open=${lines <= FOLD_TOOL_LINES}>
                  <summary class="tool-head">${head}${lines > FOLD_TOOL_LINES ? html` <span class="muted">(${lines} lines)</span>` : nothing}</summary>
                  <pre class="tool-output">${m.text}</pre>
                </details>`
          }
        </article>`;
      }
      default:
        return html`<article class="msg msg-system" aria-label="Notice" data-id=${m.id}><div class="msg-text">${linkify(m.text)}</div></article>`;
    }
  }

  /** Fetches what changed since the cursor (everything when `full`), one call at a time. */
  private async refresh(full = false): Promise<void> {
    const s = this.session;
    const app = this.app;
    if (!s || !app || this.isSystem) return;
    if (this.fetching) {
      this.wantAgain = true;
      return;
    }
    this.fetching = true;
    this.requestedRevision = s.chatRevision;
    this.abort = new AbortController();
    try {
      const res = await app.hub.sessions.getChat(
        { name: s.name, cursor: full ? "" : this.cursor, historyLines: CHAT_HISTORY_LINES, pageSize: CHAT_PAGE_SIZE },
        { signal: this.abort.signal },
      );
      const list = this.querySelector<HTMLElement>(".chat-log");
      this.following = !list || list.scrollHeight - list.scrollTop - list.clientHeight <= FOLLOW_SLACK_PX;
      if (res.reset || full || this.cursor === "") {
        // A whole chat replaces what is shown, older pages included: it starts again from the newest.
        this.messages = res.messages;
        this.hasOlder = res.hasMore;
        this.olderToken = res.olderPageToken;
      } else if (res.messages.length > 0) {
        const firstId = res.messages[0]?.id;
        const at = this.messages.findIndex((m) => m.id === firstId);
        this.messages = [...(at >= 0 ? this.messages.slice(0, at) : this.messages), ...res.messages];
      }
      if (res.messages.length > 0 && !this.following) this.unseenBelow = true;
      this.cursor = res.nextCursor;
      this.loaded = true;
      this.error = "";
    } catch (err) {
      if (!isCancelled(err)) {
        this.error = `The conversation could not be read: ${describeError(err)}`;
        this.requestedRevision = undefined;
      }
    } finally {
      this.fetching = false;
    }
    if (this.wantAgain) {
      this.wantAgain = false;
      void this.refresh();
    }
  }

  /**
   * Reads the page before the first message shown and puts it in front, keeping the messages on
   * screen where they are. A token from a log the session no longer writes (after `/clear`) reads the
   * whole chat again.
   */
  private async loadOlder(): Promise<void> {
    const s = this.session;
    const app = this.app;
    if (!s || !app || this.loadingOlder || !this.hasOlder || this.olderToken === "") return;
    this.loadingOlder = true;
    const token = this.olderToken;
    try {
      const res = await app.hub.sessions.getChat(
        { name: s.name, before: token, pageSize: CHAT_PAGE_SIZE },
        { signal: this.abort?.signal },
      );
      if (token !== this.olderToken) return; // the chat was read again meanwhile
      const list = this.querySelector<HTMLElement>(".chat-log");
      const fromBottom = list ? list.scrollHeight - list.scrollTop : 0;
      const shown = new Set(this.messages.map((m) => m.id));
      this.messages = [...res.messages.filter((m) => !shown.has(m.id)), ...this.messages];
      this.hasOlder = res.hasMore;
      this.olderToken = res.olderPageToken;
      await this.updateComplete;
      if (list) list.scrollTop = list.scrollHeight - fromBottom;
    } catch (err) {
      if (err instanceof ConnectError && err.code === Code.FailedPrecondition) {
        void this.refresh(true);
      } else if (!isCancelled(err)) {
        this.error = `Earlier messages could not be read: ${describeError(err)}`;
      }
    } finally {
      this.loadingOlder = false;
    }
  }

  private readonly onScroll = (e: Event) => {
    const el = e.currentTarget as HTMLElement;
    this.following = el.scrollHeight - el.scrollTop - el.clientHeight <= FOLLOW_SLACK_PX;
    if (this.following && this.unseenBelow) this.unseenBelow = false;
    if (el.scrollTop <= OLDER_PAGE_SLACK_PX && this.hasOlder) void this.loadOlder();
  };

  private scrollToEnd(): void {
    const list = this.querySelector<HTMLElement>(".chat-log");
    if (list) list.scrollTop = list.scrollHeight;
    this.following = true;
    this.unseenBelow = false;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "sa-chat-view": SaChatView;
  }
}
