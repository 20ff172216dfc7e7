import { timestampDate } from "@bufbuild/protobuf/wkt";
import { consume } from "@lit/context";
import { Task, TaskStatus } from "@lit/task";
import { html, nothing } from "lit";
import { state } from "lit/decorators.js";
import {
  type Delivery,
  DeliveryOutcome,
  NotificationKind,
  type Webhook,
  WebhookFormat,
} from "../../../../gen/staragent/v1/notification_service_pb.js";
import { describeError } from "../../api/errors.js";
import { type AppServices, appContext } from "../../state/app-context.js";
import { relativeTime } from "../../state/session-labels.js";
import { LightElement } from "../base/light-element.js";

/**
 * The command that adds a webhook, shown in the dialog: adding stays on the command line, where a bot
 * token or a secret URL is read from a file or stdin and never passes through a page, its history or
 * an extension's reach.
 */
const ADD_WEBHOOK_COMMAND =
  "staragent notify add NAME --url URL --format generic|ntfy|slack|discord|telegram|lark [--secret-file FILE]";

/** Words for an attempt's outcome, as people read them. */
const OUTCOME_WORDS: Record<DeliveryOutcome, string> = {
  [DeliveryOutcome.UNSPECIFIED]: "unknown",
  [DeliveryOutcome.DELIVERED]: "delivered",
  [DeliveryOutcome.RETRYING]: "failed, retrying",
  [DeliveryOutcome.FAILED]: "failed",
  [DeliveryOutcome.SUBSCRIPTION_GONE]: "gone",
  [DeliveryOutcome.SUPPRESSED_VIEWING]: "not sent (page open)",
  [DeliveryOutcome.SUPERSEDED]: "replaced by a newer one",
};

/** A webhook with its newest delivery, if it had one. */
interface WebhookRow {
  readonly hook: Webhook;
  readonly last: Delivery | undefined;
}

/**
 * The webhooks in the settings (NotificationService): each one's name, body format, where it posts,
 * its filters, and its newest delivery with how it went; a test sends one now (TestNotification) and
 * says how it went; Remove forgets one after a second click. Adding one is on the command line (the
 * dialog shows the command): its secrets never pass through a page.
 */
export class SaWebhooksDialog extends LightElement {
  @consume({ context: appContext }) private app?: AppServices;
  /** The webhook whose Remove was clicked once: the next click on it removes. */
  @state() private confirming = "";
  /** What the last action said, per webhook (a test's outcome, a failure). */
  @state() private said = new Map<string, { text: string; error: boolean }>();
  @state() private busy = "";

  private readonly listTask = new Task(this, {
    task: async (_args: [], { signal }): Promise<WebhookRow[]> => {
      const notifications = this.app?.hub.notifications;
      if (!notifications) return [];
      const { webhooks } = await notifications.listWebhooks({}, { signal });
      return Promise.all(
        webhooks.map(async (hook) => {
          const res = await notifications.listDeliveries({ target: hook.name, pageSize: 1 }, { signal });
          return { hook, last: res.deliveries[0] };
        }),
      );
    },
    autoRun: false,
  });

  /** Opens the dialog and reads the webhooks and their newest deliveries. */
  open(): void {
    this.confirming = "";
    this.said = new Map();
    this.querySelector("dialog")?.showModal();
    void this.listTask.run([]);
  }

  protected override render() {
    const loading = this.listTask.status === TaskStatus.PENDING;
    const rows = this.listTask.value ?? [];
    return html`<dialog aria-labelledby="webhooks-title">
      <div class="dialog-body">
        <h2 id="webhooks-title">Webhooks</h2>
        <p class="muted">
          Chat apps and ntfy are told what push notifications say: a session that asks for something or finished its
          turn, with no dashboard page open.
        </p>
        ${
          this.listTask.status === TaskStatus.ERROR
            ? html`<p class="form-error" role="alert">Could not read the webhooks: ${describeError(this.listTask.error)}</p>`
            : nothing
        }
        <div class="webhook-list" aria-busy=${loading ? "true" : "false"}>
          ${
            loading && rows.length === 0
              ? html`<p role="status">Reading the webhooks…</p>`
              : rows.length === 0 && this.listTask.status === TaskStatus.COMPLETE
                ? html`<p class="empty">No webhooks yet.</p>`
                : html`<ul>
                    ${rows.map((r) => this.renderRow(r))}
                  </ul>`
          }
        </div>
        <p class="muted small">
          Adding one is done on the Hub's command line, so that bot tokens and secret URLs are read from a file or stdin
          and never pass through a web page:
        </p>
        <pre class="mono add-command">${ADD_WEBHOOK_COMMAND}</pre>
        <p class="muted small">
          Slack, Discord and Lark URLs are secrets: give them with <code>--url-file FILE</code>. See
          <code>staragent notify --help</code>.
        </p>
        <div class="actions">
          <button type="button" class="primary" @click=${() => this.querySelector("dialog")?.close()}>Done</button>
        </div>
      </div>
    </dialog>`;
  }

  private renderRow({ hook, last }: WebhookRow) {
    const id = hook.name.replace(/^webhooks\//, "");
    const said = this.said.get(hook.name);
    const busy = this.busy === hook.name;
    return html`<li class="webhook-item" data-webhook=${id}>
      <div class="webhook-info">
        <strong>${id}</strong>
        <span class="muted">${formatWord(hook.format)} · <span class="mono">${hook.urlDisplay || "default URL"}</span></span>
        <span class="muted small">${filtersText(hook)}</span>
        <span class="small webhook-last">${lastText(last)}</span>
        ${said ? html`<span class="small ${said.error ? "error-text" : ""}" role="status">${said.text}</span>` : nothing}
      </div>
      <div class="webhook-actions">
        <button type="button" ?disabled=${busy} aria-label="Test ${id}" @click=${() => this.testHook(hook)}>
          ${busy && this.confirming !== hook.name ? "Sending…" : "Test"}
        </button>
        <button
          type="button"
          class=${this.confirming === hook.name ? "danger" : ""}
          ?disabled=${busy}
          aria-label=${this.confirming === hook.name ? `Really remove ${id}` : `Remove ${id}`}
          @click=${() => this.removeHook(hook)}
        >
          ${this.confirming === hook.name ? "Really remove" : "Remove"}
        </button>
      </div>
    </li>`;
  }

  private async testHook(hook: Webhook): Promise<void> {
    const notifications = this.app?.hub.notifications;
    if (!notifications) return;
    this.busy = hook.name;
    try {
      const { delivery } = await notifications.testNotification({ target: hook.name });
      const ok = delivery?.outcome === DeliveryOutcome.DELIVERED;
      this.say(hook.name, `Test: ${deliveryText(delivery)}`, !ok);
      void this.listTask.run([]);
    } catch (err) {
      this.say(hook.name, `The test was not sent: ${describeError(err)}`, true);
    } finally {
      this.busy = "";
    }
  }

  private async removeHook(hook: Webhook): Promise<void> {
    if (this.confirming !== hook.name) {
      this.confirming = hook.name;
      return;
    }
    const notifications = this.app?.hub.notifications;
    if (!notifications) return;
    this.busy = hook.name;
    try {
      await notifications.removeWebhook({ name: hook.name });
      this.app?.toast(`Removed the webhook ${hook.name.replace(/^webhooks\//, "")}.`);
      this.confirming = "";
      await this.listTask.run([]);
    } catch (err) {
      this.say(hook.name, `Not removed: ${describeError(err)}`, true);
    } finally {
      this.busy = "";
    }
  }

  private say(name: string, text: string, error: boolean): void {
    this.said = new Map([...this.said, [name, { text, error }]]);
  }
}

function formatWord(format: WebhookFormat): string {
  return (WebhookFormat[format] ?? "unknown").toLowerCase();
}

/** A webhook's filters as people read them ("every session" when it has none). */
export function filtersText(hook: Webhook): string {
  const parts: string[] = [];
  if (hook.nodeFilter) parts.push(`node ${hook.nodeFilter}`);
  if (hook.sessionPattern) parts.push(`sessions ${hook.sessionPattern}`);
  if (hook.kinds.length > 0) {
    parts.push(hook.kinds.map((k) => (k === NotificationKind.PROMPT ? "prompts" : "finished turns")).join(" and "));
  }
  return parts.length === 0 ? "Every session, prompts and finished turns" : `Only ${parts.join(", ")}`;
}

/** How one attempt went, with the receiver's status and reason when it failed. */
function deliveryText(d: Delivery | undefined): string {
  if (!d) return "no answer";
  const word = OUTCOME_WORDS[d.outcome] ?? "unknown";
  const status = d.httpStatus ? ` (HTTP ${d.httpStatus})` : "";
  return d.error ? `${word}${status}: ${d.error}` : `${word}${status}`;
}

function lastText(d: Delivery | undefined): string {
  if (!d) return "Nothing sent yet.";
  const when = d.time ? relativeTime(timestampDate(d.time)) : "";
  return `Last: ${deliveryText(d)}${when ? `, ${when}` : ""}`;
}

declare global {
  interface HTMLElementTagNameMap {
    "sa-webhooks-dialog": SaWebhooksDialog;
  }
}
