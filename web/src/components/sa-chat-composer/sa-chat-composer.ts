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
  | { readonly kind: "typed"; readonly detail: string }
  | { readonly kind: "failed"; readonly error: string }
  | { readonly kind: "recovered" };

/**
 * Writes a message to a session: Enter sends, Shift+Enter makes a new line, and Enter that confirms an
 * input method's composition (Chinese, Japanese, Korean...) is left to the input method. On a touch
 * screen, whose keyboard has no Shift+Enter, Enter makes a new line and the Send button sends. The Hub types
 * the text as one bracketed paste, so multi-line text arrives whole, and says whether the CLI's own log
 * confirmed it. The unsent text is kept per session across reloads; a message whose sending was cut off
 * by a reload comes back into the box with a note instead of being sent twice or lost.
 */
export class SaChatComposer extends LightElement {
  /** The session's resource name. */
  @property({ attribute: false }) sessionName = "";
  /** When set, the composer is disabled and says why. */
  @property({ attribute: false }) disabledReason = "";

  @consume({ context: appContext }) private app?: AppServices;
  @state() private delivery: Delivery = { kind: "none" };
  @state() private text = "";
  /** The main pointer is a finger: Enter adds a line, Send sends. */
  @state() private touch = false;
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
        placeholder=${disabled ? "Chat is off for this session" : this.touch ? "Write to the agent…" : "Write to the agent… (Enter sends, Shift+Enter adds a line)"}
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
        ${sending ? "Sending…" : "Send"}
      </button>
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
      case "typed":
        return html`<span class="typed">Typed into the session; the CLI did not confirm it</span> <span class="muted">(${d.detail})</span>`;
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

  private async send(): Promise<void> {
    const app = this.app;
    const text = this.text;
    const name = this.sessionName;
    if (!app || this.disabledReason || text.trim() === "" || this.delivery.kind === "sending") return;
    if (new TextEncoder().encode(text).length > MAX_CHAT_BYTES) return;
    this.delivery = { kind: "sending" };
    chatDrafts.setPending(name, text);
    try {
      const res = await app.hub.sessions.sendChatMessage({ name, text });
      chatDrafts.setPending(name, undefined);
      if (this.sessionName === name) {
        // Keep anything typed meanwhile; only the text that was sent leaves the box.
        this.text = this.text === text ? "" : this.text;
        chatDrafts.setDraft(name, this.text);
        this.delivery = res.confirmed
          ? { kind: "confirmed", detail: res.confirmationDetail || "the CLI's log shows it" }
          : { kind: "typed", detail: res.confirmationDetail || "no native log" };
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
