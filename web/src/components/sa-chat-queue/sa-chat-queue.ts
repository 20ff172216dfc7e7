import { timestampDate } from "@bufbuild/protobuf/wkt";
import { consume } from "@lit/context";
import { html, nothing, type PropertyValues } from "lit";
import { property, state } from "lit/decorators.js";
import type { Session } from "../../../../gen/staragent/v1/session_pb.js";
import type { QueuedMessage } from "../../../../gen/staragent/v1/session_service_pb.js";
import { describeError, isCancelled } from "../../api/errors.js";
import { type AppServices, appContext } from "../../state/app-context.js";
import { relativeTime } from "../../state/session-labels.js";
import { LightElement } from "../base/light-element.js";

/**
 * The session's queued messages ("send when idle"), oldest first: each is typed by the owning machine
 * when the agent is next idle, and can be cancelled until then. The list is read again whenever the
 * session's `queued_messages` count changes (WatchSessions pushes it) and after a cancel. Text is
 * shown as text.
 */
export class SaChatQueue extends LightElement {
  /** The session (from the store; updated as it changes). */
  @property({ attribute: false }) session: Session | undefined;

  @consume({ context: appContext }) private app?: AppServices;
  @state() private messages: readonly QueuedMessage[] = [];
  @state() private error = "";
  @state() private cancelling = new Set<string>();
  private request = 0;
  private readFor = "";

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (!changed.has("session")) return;
    const s = this.session;
    const key = s ? `${s.name}\0${s.queuedMessages}` : "";
    if (key === this.readFor) return;
    if (s && this.readFor.split("\0")[0] !== s.name) this.messages = [];
    this.readFor = key;
    if (s && (s.queuedMessages > 0 || this.messages.length > 0)) void this.read();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.request++;
    this.readFor = "";
  }

  private async read(): Promise<void> {
    const app = this.app;
    const name = this.session?.name;
    if (!app || !name) return;
    const request = ++this.request;
    try {
      const res = await app.hub.sessions.listQueuedMessages({ name });
      if (request !== this.request) return;
      this.messages = res.messages;
      this.error = "";
    } catch (err) {
      if (request !== this.request || isCancelled(err)) return;
      this.error = describeError(err);
    }
  }

  private async cancel(m: QueuedMessage): Promise<void> {
    const app = this.app;
    const name = this.session?.name;
    if (!app || !name) return;
    this.cancelling = new Set([...this.cancelling, m.id]);
    try {
      await app.hub.sessions.cancelQueuedMessage({ name, id: m.id });
      this.error = "";
    } catch (err) {
      this.error = `Not cancelled: ${describeError(err)}`;
    } finally {
      const left = new Set(this.cancelling);
      left.delete(m.id);
      this.cancelling = left;
      await this.read();
    }
  }

  protected override render() {
    if (this.messages.length === 0 && this.error === "") return nothing;
    return html`<section class="chat-queue" aria-label="Queued messages">
      <h3 class="queue-title">Sent when the agent is idle (${this.messages.length})</h3>
      ${this.error ? html`<p class="error-text queue-error" role="alert">${this.error}</p>` : nothing}
      <ol class="queue-list">
        ${this.messages.map(
          (m) => html`<li class="queued" data-id=${m.id}>
            <span class="queued-text">${m.text}</span>
            <span class="queued-meta">
              ${
                m.typing
                  ? html`<span class="queued-typing">typing now…</span>`
                  : m.uncertain
                    ? html`<span class="error-text">may have been typed before a restart: check the chat</span>`
                    : m.createTime
                      ? relativeTime(timestampDate(m.createTime))
                      : ""
              }
              <button
                type="button"
                class="queued-cancel"
                aria-label="Cancel queued message: ${m.text.slice(0, 60)}"
                ?disabled=${m.typing || this.cancelling.has(m.id)}
                @click=${() => void this.cancel(m)}
              >
                Cancel
              </button>
            </span>
          </li>`,
        )}
      </ol>
    </section>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "sa-chat-queue": SaChatQueue;
  }
}
