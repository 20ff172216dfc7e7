import { consume } from "@lit/context";
import { html, nothing, type PropertyValues } from "lit";
import { property, state } from "lit/decorators.js";
import { describeError } from "../../api/errors.js";
import { type AppServices, appContext } from "../../state/app-context.js";
import { chatDrafts } from "../../state/chat-drafts.js";
import { LightElement } from "../base/light-element.js";

/** The contract's limit on one chat message, in bytes of UTF-8. */
const MAX_CHAT_BYTES = 16_384;

/** What happened to the last message sent. */
type Delivery =
  | { readonly kind: "none" }
  | { readonly kind: "sending" }
  | { readonly kind: "confirmed"; readonly detail: string }
  | { readonly kind: "typed"; readonly detail: string; readonly duringTurn: boolean }
  | { readonly kind: "queued" }
  | { readonly kind: "failed"; readonly error: string }
  | { readonly kind: "recovered" };

/**
 * Writes a message to a session: Enter sends, Shift+Enter makes a new line, and Enter that confirms an
 * input method's composition (Chinese, Japanese, Korean...) is left to the input method. On a touch
 * screen, whose keyboard has no Shift+Enter, Enter makes a new line and the Send button sends. The Hub types
 * the text as one bracketed paste, so multi-line text arrives whole, and says whether the CLI's own log
 * confirmed it. The unsent text is kept per session across reloads; a message whose sending was cut off
 * by a reload comes back into the box with a note instead of being sent twice or lost. With "send when
 * idle" ticked, the message is queued instead (QueueChatMessage): the owning machine types it when the
 * agent is next idle, and the queue list above the composer shows it until then.
 */
export class SaChatComposer extends LightElement {
  /** The session's resource name. */
  @property({ attribute: false }) sessionName = "";
  /** When set, the composer is disabled and says why. */
  @property({ attribute: false }) disabledReason = "";
  /** What a message is typed into: the agent, or the shell a pane became after its agent exited. */
  @property({ attribute: false }) target: "agent" | "shell" = "agent";
  /** True while the agent works on a turn: a message typed now may be held by the CLI until it ends. */
  @property({ attribute: false }) working = false;

  @consume({ context: appContext }) private app?: AppServices;
  @state() private delivery: Delivery = { kind: "none" };
  @state() private text = "";
  /** The main pointer is a finger: Enter adds a line, Send sends. */
  @state() private touch = false;
  /** "Send when idle": queue the message instead of typing it now. */
  @state() private whenIdle = false;
  private composing = false;
  private readonly coarse = matchMedia("(pointer: coarse)");
  private readonly onPointerChange = () => {
    this.touch = this.coarse.matches;
  };

  override connectedCallback(): void {
    super.connectedCallback();
    this.touch = this.coarse.matches;
    this.coarse.addEventListener("change", this.onPointerChange);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.coarse.removeEventListener("change", this.onPointerChange);
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has("sessionName") && this.sessionName) {
      const pending = chatDrafts.pending(this.sessionName);
      const draft = chatDrafts.draft(this.sessionName);
      if (pending !== undefined) {
        this.text = draft === "" ? pending : draft;
        this.delivery = { kind: "recovered" };
        chatDrafts.setPending(this.sessionName, undefined);
        chatDrafts.setDraft(this.sessionName, this.text);
      } else {
        this.text = draft;
        this.delivery = { kind: "none" };
      }
    }
  }

  protected override render() {
    const disabled = this.disabledReason !== "";
    const sending = this.delivery.kind === "sending";
    const tooLong = new TextEncoder().encode(this.text).length > MAX_CHAT_BYTES;
    return html`<form class="composer" @submit=${this.onSubmit}>
      <label class="visually-hidden" for="composer-text">Message</label>
      <textarea
        id="composer-text"
        rows="2"
        .value=${this.text}
        ?disabled=${disabled}
        placeholder=${disabled ? "Chat is off for this session" : this.touch ? `Write to the ${this.target}…` : `Write to the ${this.target}… (Enter sends, Shift+Enter adds a line)`}
        aria-describedby="composer-status"
        enterkeyhint=${this.touch ? "enter" : "send"}
        @input=${this.onInput}
        @keydown=${this.onKeyDown}
        @compositionstart=${() => {
          this.composing = true;
        }}
        @compositionend=${() => {
          // Some browsers send the Enter that ends a composition right after compositionend.
          setTimeout(() => {
            this.composing = false;
          }, 0);
        }}
      ></textarea>
      <button class="primary" type="submit" ?disabled=${disabled || sending || this.text.trim() === "" || tooLong}>
        ${sending ? (this.whenIdle ? "Queueing…" : "Sending…") : this.whenIdle ? "Queue" : "Send"}
      </button>
      <label class="when-idle"
        ><input
          type="checkbox"
          .checked=${this.whenIdle}
          ?disabled=${disabled}
          @change=${(e: Event) => (this.whenIdle = (e.target as HTMLInputElement).checked)}
        />
        Send when idle</label
      >
      <p id="composer-status" class="composer-status" role="status" aria-live="polite">
        ${disabled ? this.disabledReason : tooLong ? html`<span class="error-text">The message is longer than 16 KiB; shorten it.</span>` : this.renderDelivery()}
      </p>
    </form>`;
  }

  private renderDelivery() {
    const d = this.delivery;
    switch (d.kind) {
      case "sending":
        return "Typing the message into the session…";
      case "confirmed":
        return html`<span class="delivered"><span aria-hidden="true">✓</span> Delivered</span> <span class="muted">(${d.detail})</span>`;
      case "queued":
        return html`<span class="delivered"><span aria-hidden="true">✓</span> Queued</span> <span class="muted">(typed when the agent is next idle)</span>`;
      case "typed":
        return html`<span class="typed">${d.duringTurn ? "Typed while the agent works; it has not taken it up yet" : "Typed into the session; the CLI did not confirm it"}</span> <span class="muted">(${d.detail})</span>`;
      case "failed":
        return html`<span class="error-text">Not sent: ${d.error}</span>`;
      case "recovered":
        return html`<span class="error-text">This message may not have been sent before the page reloaded. Check the conversation, then send it again if needed.</span>`;
      default:
        return nothing;
    }
  }

  private readonly onInput = (e: Event) => {
    this.text = (e.target as HTMLTextAreaElement).value;
    chatDrafts.setDraft(this.sessionName, this.text);
    if (this.delivery.kind === "failed" || this.delivery.kind === "recovered") this.delivery = { kind: "none" };
  };

  private readonly onKeyDown = (e: KeyboardEvent) => {
    if (e.key !== "Enter" || e.shiftKey || e.altKey || e.ctrlKey || e.metaKey || this.touch) return;
    // 229 is the key code of keys an input method is processing.
    if (e.isComposing || this.composing || e.keyCode === 229) return;
    e.preventDefault();
    void this.send();
  };

  private readonly onSubmit = (e: SubmitEvent) => {
    e.preventDefault();
    void this.send();
  };

  /** Queues `text` for `name` (nothing is pending meanwhile: a queued message is never typed twice). */
  private async queue(app: AppServices, name: string, text: string): Promise<void> {
    try {
      await app.hub.sessions.queueChatMessage({ name, text });
      if (this.sessionName === name) {
        this.text = this.text === text ? "" : this.text;
        chatDrafts.setDraft(name, this.text);
        this.delivery = { kind: "queued" };
      }
    } catch (err) {
      if (this.sessionName === name) this.delivery = { kind: "failed", error: describeError(err) };
    }
  }

  private async send(): Promise<void> {
    const app = this.app;
    const text = this.text;
    const name = this.sessionName;
    if (!app || this.disabledReason || text.trim() === "" || this.delivery.kind === "sending") return;
    if (new TextEncoder().encode(text).length > MAX_CHAT_BYTES) return;
    this.delivery = { kind: "sending" };
    if (this.whenIdle) {
      await this.queue(app, name, text);
      return;
    }
    chatDrafts.setPending(name, text);
    const duringTurn = this.working;
    try {
      const res = await app.hub.sessions.sendChatMessage({ name, text });
      chatDrafts.setPending(name, undefined);
      if (this.sessionName === name) {
        // Keep anything typed meanwhile; only the text that was sent leaves the box.
        this.text = this.text === text ? "" : this.text;
        chatDrafts.setDraft(name, this.text);
        this.delivery = res.confirmed
          ? { kind: "confirmed", detail: res.confirmationDetail || "the CLI's log shows it" }
          : { kind: "typed", detail: res.confirmationDetail || "no native log", duringTurn };
      }
    } catch (err) {
      chatDrafts.setPending(name, undefined);
      if (this.sessionName === name) this.delivery = { kind: "failed", error: describeError(err) };
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "sa-chat-composer": SaChatComposer;
  }
}
