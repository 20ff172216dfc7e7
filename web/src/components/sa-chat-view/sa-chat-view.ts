import { consume } from "@lit/context";
import { html, nothing, type PropertyValues } from "lit";
import { property, state } from "lit/decorators.js";
import { repeat } from "lit/directives/repeat.js";
import { unsafeHTML } from "lit/directives/unsafe-html.js";
import {
  type ChatMessage,
  ChatMessageSource,
  ChatRole,
  Cli,
  type Session,
  SessionStatus,
  SessionType,
  StatusReason,
} from "../../../../gen/staragent/v1/session_pb.js";
import { type AppServices, appContext } from "../../state/app-context.js";
import { ChatFeed } from "../../state/chat-feed.js";
import { sessionPath } from "../../state/routes.js";
import { cliName, reasonText } from "../../state/session-labels.js";
import { linkify } from "../../util/linkify.js";
import { LightElement } from "../base/light-element.js";

/** Distance from the bottom (px) within which the view keeps following new messages. */
const FOLLOW_SLACK_PX = 48;
/** Tool output longer than this many lines starts folded. */
const FOLD_TOOL_LINES = 12;
/** Distance from the top (px) at which the next older page is read. */
const OLDER_PAGE_SLACK_PX = 120;

/** Rendered answers kept (by text), so a redraw does not parse every answer again. */
const MARKDOWN_CACHE_ENTRIES = 400;
/** The Markdown renderer once its chunk has loaded; until then answers are shown as text. */
let markdown: ((text: string) => string) | undefined;
let markdownLoad: Promise<unknown> | undefined;
const rendered = new Map<string, string>();

/** An answer as sanitized HTML from its Markdown, or undefined while the renderer loads (asked for here). */
function answerHtml(text: string, loaded: () => void): string | undefined {
  if (!markdown) {
    markdownLoad ??= import("../../chat/chat-markdown.js").then((m) => {
      markdown = m.chatMarkdown;
    });
    void markdownLoad.then(loaded, () => undefined);
    return undefined;
  }
  let out = rendered.get(text);
  if (out === undefined) {
    if (rendered.size >= MARKDOWN_CACHE_ENTRIES) rendered.clear();
    out = markdown(text);
    rendered.set(text, out);
  }
  return out;
}

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
  @state() private unseenBelow = false;
  private following = true;
  /** The list's distance from the bottom before an older page was put in front. */
  private fromBottom = 0;
  private feedOf: ChatFeed | undefined;

  /** The conversation, read once the app's services are there. */
  private get feed(): ChatFeed | undefined {
    const app = this.app;
    if (!this.feedOf && app) {
      this.feedOf = new ChatFeed(app.hub.sessions, () => this.session?.name, {
        beforeNewer: () => {
          const list = this.chatLog();
          this.following = !list || list.scrollHeight - list.scrollTop - list.clientHeight <= FOLLOW_SLACK_PX;
        },
        newerShown: (count) => {
          if (count > 0 && !this.following) this.unseenBelow = true;
        },
        beforeOlder: () => {
          const list = this.chatLog();
          this.fromBottom = list ? list.scrollHeight - list.scrollTop : 0;
        },
        olderShown: () => {
          // Keeps the messages on screen where they were once the page in front is drawn.
          this.requestUpdate();
          void this.updateComplete.then(() => {
            const list = this.chatLog();
            if (list) list.scrollTop = list.scrollHeight - this.fromBottom;
          });
        },
      });
      // The feed lives as long as this view: one subscription, never removed.
      this.feedOf.subscribe(() => this.requestUpdate());
    }
    return this.feedOf;
  }

  private get isSystem(): boolean {
    return this.session?.type === SessionType.SYSTEM;
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.resized.disconnect();
    this.observedLog = null;
    this.feedOf?.stop();
  }

  protected override willUpdate(changed: PropertyValues): void {
    const s = this.session;
    if (!s || this.isSystem) return;
    if (changed.has("session") && this.feed?.wants(s.chatRevision)) void this.feed?.refresh(s.chatRevision);
  }

  /** Keeps a following log at its bottom when its box shrinks (a queued row, a phone's keyboard). */
  private readonly resized = new ResizeObserver(() => {
    const list = this.chatLog();
    if (list && this.following) list.scrollTop = list.scrollHeight;
  });
  private observedLog: HTMLElement | null = null;

  protected override updated(changed: PropertyValues): void {
    const log = this.chatLog();
    if (log && log !== this.observedLog) this.resized.observe(log);
    this.observedLog = log;
    const messages = this.feedOf?.messages;
    if (messages !== this.shownMessages || (changed.has("active") && this.active)) {
      this.shownMessages = messages;
      const list = this.chatLog();
      if (list && this.following) list.scrollTop = list.scrollHeight;
    }
  }

  /** The messages of the last render, to notice new ones. */
  private shownMessages: readonly ChatMessage[] | undefined;

  private chatLog(): HTMLElement | null {
    return this.querySelector<HTMLElement>(".chat-log");
  }

  protected override render() {
    const s = this.session;
    if (!s) return nothing;
    if (this.isSystem) {
      return html`<div class="chat-log"><div class="empty-state chat-off"><p>${SYSTEM_CHAT_REASON}</p></div></div>
        <sa-chat-composer .sessionName=${s.name} .disabledReason=${SYSTEM_CHAT_REASON}></sa-chat-composer>`;
    }
    const feed = this.feed;
    const messages = feed?.messages ?? [];
    const logged = messages.some((m) => m.source === ChatMessageSource.LOG);
    // Focusable: it scrolls, and its messages may hold nothing else a keyboard can reach.
    // The log shares a box with its "new messages" button: never over the queue or composer below.
    return html`<div class="chat-log-area"><div class="chat-log" role="log" tabindex="0" aria-label="Conversation with ${s.tmuxSession}"
        @scroll=${this.onScroll}>
        ${feed?.error ? html`<p class="chat-error" role="alert">${feed.error} <button @click=${() => feed.refresh(s.chatRevision, true)}>Try again</button></p>` : nothing}
        ${
          feed?.hasOlder
            ? html`<div class="chat-older">
                <button class="secondary" ?disabled=${feed.loadingOlder} @click=${() => feed.loadOlder(s.chatRevision)}>
                  ${feed.loadingOlder ? "Reading earlier messages…" : "Show earlier messages"}
                </button>
              </div>`
            : nothing
        }
        ${
          !feed?.loaded && !feed?.error
            ? html`<p class="empty-state" role="status">Reading the conversation…</p>`
            : feed.loaded && messages.length === 0
              ? html`<div class="empty-state">
                  <h2>No messages yet</h2>
                  <p>Write to ${cliName(s.cli)} below: it is typed into the session as one message.</p>
                </div>`
              : nothing
        }
        ${repeat(
          messages,
          (m) => m.id,
          (m) => this.renderMessage(m, s, logged),
        )}
      </div>
      ${
        this.unseenBelow
          ? html`<button class="new-below" @click=${() => this.scrollToEnd()}>New messages <span aria-hidden="true">↓</span></button>`
          : nothing
      }</div>
      ${
        s.status === SessionStatus.REVIEW && s.statusReason === StatusReason.INPUT_PROMPT
          ? html`<p class="chat-waiting" role="status">
              <span class="glyph" aria-hidden="true">◆</span>
              <span><strong>${reasonText(s)}</strong><br />The agent waits for your answer on its screen:
              <a href=${sessionPath(s.node, s.tmuxSession)} data-route>answer in the Terminal</a>.</span>
            </p>`
          : nothing
      }
      <sa-chat-queue .session=${s}></sa-chat-queue>
      <sa-turn-bar .session=${s}></sa-turn-bar>
      <sa-chat-composer
        .sessionName=${s.name}
        .disabledReason=${""}
        .target=${s.exitStatus !== undefined && s.cli === Cli.SHELL ? "shell" : "agent"}
        .working=${s.status === SessionStatus.WORKING}
      ></sa-chat-composer>`;
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
      case ChatRole.ASSISTANT: {
        // The log holds the answer as Markdown; an answer read off the screen is drawn already (text).
        const rich = m.source === ChatMessageSource.LOG ? answerHtml(m.text, () => this.markdownLoaded()) : undefined;
        // The agent that wrote it, which the session's own CLI no longer is once that agent exited.
        const writer = cliName(m.cli || s.cli);
        return html`<article class="msg msg-assistant" aria-label=${writer} data-id=${m.id}>
          <div class="msg-role">${writer}</div>
          ${
            rich === undefined
              ? html`<div class="msg-text">${linkify(m.text)}</div>`
              : html`<div class="msg-text msg-markdown">${unsafeHTML(rich)}</div>`
          }
        </article>`;
      }
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

  /** The renderer arrived: answers are drawn again from their Markdown, still following the end. */
  private markdownLoaded(): void {
    const follow = this.following;
    this.requestUpdate();
    void this.updateComplete.then(() => {
      const list = this.chatLog();
      if (list && follow) list.scrollTop = list.scrollHeight;
    });
  }

  private readonly onScroll = (e: Event) => {
    const el = e.currentTarget as HTMLElement;
    this.following = el.scrollHeight - el.scrollTop - el.clientHeight <= FOLLOW_SLACK_PX;
    if (this.following && this.unseenBelow) this.unseenBelow = false;
    const s = this.session;
    if (s && el.scrollTop <= OLDER_PAGE_SLACK_PX && this.feedOf?.hasOlder) void this.feedOf.loadOlder(s.chatRevision);
  };

  private scrollToEnd(): void {
    const list = this.chatLog();
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
