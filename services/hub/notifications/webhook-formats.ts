import { createHmac } from "node:crypto";
import type { NotificationEvent } from "./notification-events.js";
import type { StoredWebhook } from "./notification-store.js";

/** Where Telegram's Bot API is when a webhook names no URL of its own. */
export const TELEGRAM_API = "https://api.telegram.org";

/** One HTTP request to a webhook: where, with which headers, what body. */
export interface WebhookRequest {
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: string;
  /** Says why a 2xx answer still means the message was refused (Telegram, Lark answer 200 with an error). */
  readonly refusal?: (text: string) => string | undefined;
}

/**
 * The request that tells `hook` about `event`, shaped as its format wants. `link` is the dashboard
 * URL that opens the session. Only the title and the one summary line are sent, never terminal output.
 */
export function webhookRequest(
  hook: StoredWebhook,
  event: NotificationEvent,
  link: string,
  now = Date.now(),
): WebhookRequest {
  const text = `${event.title}: ${event.summary}`;
  const json = { "content-type": "application/json" };
  const bearer: Record<string, string> = hook.secret ? { authorization: `Bearer ${hook.secret}` } : {};
  switch (hook.format) {
    case "generic":
      return {
        url: hook.url,
        headers: { ...json, ...bearer },
        body: JSON.stringify({
          kind: event.kind,
          session: event.session,
          node: event.node,
          title: event.title,
          summary: event.summary,
          url: link,
        }),
      } satisfies WebhookRequest;
    case "ntfy":
      return {
        url: hook.url,
        headers: {
          "content-type": "text/plain; charset=utf-8",
          title: headerText(event.title),
          tags: event.kind === "prompt" ? "question" : "white_check_mark",
          click: link,
          ...bearer,
        },
        body: event.summary,
      } satisfies WebhookRequest;
    case "slack":
      return {
        url: hook.url,
        headers: json,
        body: JSON.stringify({ text: `*${slackEscape(event.title)}*: ${slackEscape(event.summary)}\n<${link}|Open>` }),
      } satisfies WebhookRequest;
    case "discord":
      return {
        url: hook.url,
        headers: json,
        // No mentions: a summary quoting "@everyone" must not ping a whole server.
        body: JSON.stringify({
          content: `**${event.title}**: ${event.summary}\n${link}`,
          allowed_mentions: { parse: [] },
        }),
      } satisfies WebhookRequest;
    case "telegram":
      return {
        url: `${(hook.url || TELEGRAM_API).replace(/\/+$/, "")}/bot${hook.secret}/sendMessage`,
        headers: json,
        body: JSON.stringify({ chat_id: hook.chatId, text: `${text}\n${link}`, disable_web_page_preview: true }),
        refusal: (answer) => refusalOf(answer, (a) => a.ok === true, "description"),
      } satisfies WebhookRequest;
    case "lark": {
      const signed: Record<string, string> = {};
      if (hook.secret) {
        // Lark/Feishu custom bots: HMAC-SHA256 keyed with "timestamp\nsecret" over nothing, base64.
        const timestamp = String(Math.floor(now / 1000));
        signed.timestamp = timestamp;
        signed.sign = createHmac("sha256", `${timestamp}\n${hook.secret}`).update("").digest("base64");
      }
      return {
        url: hook.url,
        headers: json,
        body: JSON.stringify({ ...signed, msg_type: "text", content: { text: `${text}\n${link}` } }),
        refusal: (answer) => refusalOf(answer, (a) => a.code === 0 || a.StatusCode === 0, "msg"),
      } satisfies WebhookRequest;
    }
  }
}

/** A chat API's 200 answer that says it refused: its message, or undefined when it accepted. */
function refusalOf(
  answer: string,
  accepted: (a: Record<string, unknown>) => boolean,
  messageField: string,
): string | undefined {
  try {
    const parsed = JSON.parse(answer) as Record<string, unknown>;
    if (accepted(parsed)) return undefined;
    const message = parsed[messageField];
    return typeof message === "string" ? message : answer;
  } catch {
    return `not a JSON answer: ${answer}`;
  }
}

/** Slack's three control characters in text, escaped as Slack asks. */
function slackEscape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** A header value: ASCII as is, anything else RFC 2047-encoded (ntfy decodes it). */
function headerText(text: string): string {
  if (/^[\u0020-\u007e]*$/.test(text)) return text;
  return `=?UTF-8?B?${Buffer.from(text, "utf8").toString("base64")}?=`;
}
