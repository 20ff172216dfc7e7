import { createHash } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import {
  type AddPushSubscriptionRequest,
  type AddWebhookRequest,
  type ListDeliveriesRequest,
  NotificationKind,
  type NotificationService,
  type PushSubscription,
  PushSubscriptionSchema,
  type RemovePushSubscriptionRequest,
  type RemoveWebhookRequest,
  type ReportViewingRequest,
  type TestNotificationRequest,
  type Webhook,
  WebhookFormat,
  WebhookSchema,
} from "../../../gen/staragent/v1/notification_service_pb.js";
import { parseSessionName } from "../../common/resource-names.js";
import type { NotificationDispatcher, Target } from "./dispatcher.js";
import type { NotificationEvent } from "./notification-events.js";
import type {
  KindName,
  NotificationFiles,
  StoredPushSubscription,
  StoredWebhook,
  WebhookFormatName,
} from "./notification-store.js";
import type { VapidKeys } from "./vapid-keys.js";

/** Longest name people give a device. */
const MAX_DISPLAY_NAME = 80;
/** Longest URL accepted for a push endpoint or a webhook. */
const MAX_URL = 2_048;
/** Longest webhook secret (bot token, signing secret). */
const MAX_SECRET = 1_024;
/** Webhook ids: lowercase letters, digits and '-', 1 to 40. */
const WEBHOOK_ID = /^[a-z0-9][a-z0-9-]{0,39}$/;
/** Deliveries ListDeliveries returns when the request names no page size, and at most. */
const DEFAULT_DELIVERIES = 100;
const MAX_PAGE = 1_000;
/** Bytes of a browser's P-256 public key (uncompressed point) and of its auth secret. */
const P256DH_BYTES = 65;
const AUTH_BYTES = 16;

const FORMAT_NAMES: Record<WebhookFormatName, WebhookFormat> = {
  generic: WebhookFormat.GENERIC,
  ntfy: WebhookFormat.NTFY,
  slack: WebhookFormat.SLACK,
  discord: WebhookFormat.DISCORD,
  telegram: WebhookFormat.TELEGRAM,
  lark: WebhookFormat.LARK,
};
const KIND_NAMES: Partial<Record<NotificationKind, KindName>> = {
  [NotificationKind.PROMPT]: "prompt",
  [NotificationKind.TURN_FINISHED]: "turn-finished",
};

/**
 * The Hub's NotificationService (`notification_service.proto`): the devices subscribed to Web Push,
 * the webhooks, what pages view, tests, and the delivery log. Authenticated like every RPC of the
 * Hub (its server's auth interceptor runs first). Subscriptions and webhooks hold secrets (push
 * endpoints and keys, bot tokens, secret URLs): they are stored with mode 0600 and never returned.
 */
export class HubNotificationService implements ServiceImpl<typeof NotificationService> {
  constructor(
    private readonly files: NotificationFiles,
    private readonly keys: VapidKeys,
    private readonly dispatcher: NotificationDispatcher,
  ) {}

  getVapidPublicKey() {
    return { publicKey: this.keys.publicKey };
  }

  async listPushSubscriptions() {
    const all = await this.files.subscriptions.read();
    return { subscriptions: [...all].sort((a, b) => b.createTime - a.createTime).map(subscriptionMessage) };
  }

  async addPushSubscription(req: AddPushSubscriptionRequest) {
    const endpoint = checkUrl(req.endpoint, "endpoint");
    checkKey(req.p256dh, P256DH_BYTES, "p256dh");
    checkKey(req.auth, AUTH_BYTES, "auth");
    const displayName = req.displayName === "" ? "" : checkDisplayName(req.displayName);
    const replaces = req.replacesEndpoint === "" ? "" : checkUrl(req.replacesEndpoint, "replaces_endpoint");
    let stored: StoredPushSubscription | undefined;
    await this.files.subscriptions.update((all) => {
      // A renewed subscription takes the place of the one it replaces: the same resource name (the
      // page keeps it to report viewing) and the name people gave the device.
      const same = all.find((s) => s.endpoint === endpoint);
      const renewed = replaces === "" || replaces === endpoint ? undefined : all.find((s) => s.endpoint === replaces);
      const earlier = renewed ?? same;
      stored = {
        id: earlier?.id ?? createHash("sha256").update(endpoint).digest("hex").slice(0, 20),
        endpoint,
        p256dh: req.p256dh,
        auth: req.auth,
        displayName: displayName || earlier?.displayName || "Device",
        createTime: earlier?.createTime ?? Date.now(),
        ...(earlier?.lastDeliveryTime === undefined ? {} : { lastDeliveryTime: earlier.lastDeliveryTime }),
      };
      return [...all.filter((s) => s !== same && s !== renewed), stored];
    });
    if (!stored) throw new ConnectError("the subscription was not stored", Code.Internal);
    await this.dispatcher.targetsChanged();
    return { subscription: subscriptionMessage(stored) };
  }

  async removePushSubscription(req: RemovePushSubscriptionRequest) {
    const id = idOf(req.name, "pushSubscriptions", "name");
    let found = false;
    await this.files.subscriptions.update((all) => {
      found = all.some((s) => s.id === id);
      return all.filter((s) => s.id !== id);
    });
    if (!found) throw notFound(req.name);
    this.dispatcher.reportViewing(req.name, "", false);
    await this.dispatcher.targetsChanged();
    return {};
  }

  async reportViewing(req: ReportViewingRequest) {
    const id = idOf(req.subscription, "pushSubscriptions", "subscription");
    if (req.session !== "") parseSessionName(req.session, "session");
    const all = await this.files.subscriptions.read();
    if (!all.some((s) => s.id === id)) throw notFound(req.subscription);
    return { ttlSeconds: this.dispatcher.reportViewing(req.subscription, req.session, req.visible) };
  }

  async listWebhooks() {
    const all = await this.files.webhooks.read();
    return { webhooks: [...all].sort((a, b) => a.id.localeCompare(b.id)).map(webhookMessage) };
  }

  async addWebhook(req: AddWebhookRequest) {
    const hook = checkWebhook(req);
    let exists = false;
    await this.files.webhooks.update((all) => {
      exists = all.some((h) => h.id === hook.id);
      return exists ? all : [...all, hook];
    });
    if (exists) throw new ConnectError(`webhooks/${hook.id} already exists; remove it first`, Code.AlreadyExists);
    await this.dispatcher.targetsChanged();
    return { webhook: webhookMessage(hook) };
  }

  async removeWebhook(req: RemoveWebhookRequest) {
    const id = idOf(req.name, "webhooks", "name");
    let found = false;
    await this.files.webhooks.update((all) => {
      found = all.some((h) => h.id === id);
      return all.filter((h) => h.id !== id);
    });
    if (!found) throw notFound(req.name);
    await this.dispatcher.targetsChanged();
    return {};
  }

  async testNotification(req: TestNotificationRequest) {
    const target = await this.targetOf(req.target);
    const event: NotificationEvent = {
      kind: "test",
      session: "",
      node: "",
      sessionName: "",
      key: "test",
      title: "StarAgent",
      summary: "Notifications from this Hub reach you.",
      path: "/",
    };
    return { delivery: await this.dispatcher.test(target, event) };
  }

  listDeliveries(req: ListDeliveriesRequest) {
    if (req.pageSize < 0 || req.pageSize > MAX_PAGE) {
      throw new ConnectError(
        `page_size: ${req.pageSize} is not between 1 and ${MAX_PAGE} (0 means ${DEFAULT_DELIVERIES})`,
        Code.InvalidArgument,
      );
    }
    return { deliveries: this.dispatcher.listDeliveries(req.target, req.pageSize || DEFAULT_DELIVERIES) };
  }

  private async targetOf(name: string): Promise<Target> {
    if (name.startsWith("pushSubscriptions/")) {
      const id = idOf(name, "pushSubscriptions", "target");
      const subscription = (await this.files.subscriptions.read()).find((s) => s.id === id);
      if (!subscription) throw notFound(name);
      return { type: "push", name, subscription };
    }
    const id = idOf(name, "webhooks", "target");
    const hook = (await this.files.webhooks.read()).find((h) => h.id === id);
    if (!hook) throw notFound(name);
    return { type: "webhook", name, hook };
  }
}

function subscriptionMessage(s: StoredPushSubscription): PushSubscription {
  return create(PushSubscriptionSchema, {
    name: `pushSubscriptions/${s.id}`,
    displayName: s.displayName,
    pushService: new URL(s.endpoint).origin,
    createTime: timestampFromMs(s.createTime),
    ...(s.lastDeliveryTime === undefined ? {} : { lastDeliveryTime: timestampFromMs(s.lastDeliveryTime) }),
  });
}

function webhookMessage(h: StoredWebhook): Webhook {
  const url = h.url === "" ? undefined : new URL(h.url);
  // Slack's, Discord's and Lark's URLs are themselves the secret: only their origin is shown.
  const secretUrl = h.format === "slack" || h.format === "discord" || h.format === "lark";
  return create(WebhookSchema, {
    name: `webhooks/${h.id}`,
    format: FORMAT_NAMES[h.format],
    urlDisplay: url === undefined ? "" : secretUrl ? url.origin : `${url.origin}${url.pathname}`,
    hasSecret: h.secret !== "",
    chatId: h.chatId,
    nodeFilter: h.nodeFilter,
    sessionPattern: h.sessionPattern,
    kinds: h.kinds.map((k) => (k === "prompt" ? NotificationKind.PROMPT : NotificationKind.TURN_FINISHED)),
    createTime: timestampFromMs(h.createTime),
  });
}

/** Checks an AddWebhook request; the webhook to store. */
function checkWebhook(req: AddWebhookRequest): StoredWebhook {
  if (!WEBHOOK_ID.test(req.webhookId)) {
    throw invalid(
      `webhook_id: ${JSON.stringify(req.webhookId.slice(0, 60))} is not an id (lowercase letters, digits and '-', 1 to 40, starting with a letter or digit)`,
    );
  }
  const format = (Object.entries(FORMAT_NAMES) as Array<[WebhookFormatName, WebhookFormat]>).find(
    ([, f]) => f === req.format,
  )?.[0];
  if (!format) throw invalid("format: choose one of generic, ntfy, slack, discord, telegram, lark");
  const url = req.url === "" && format === "telegram" ? "" : checkUrl(req.url, "url");
  if (req.secret.length > MAX_SECRET || /[\s]/.test(req.secret)) {
    throw invalid(`secret: at most ${MAX_SECRET} characters, with no spaces or line breaks`);
  }
  if (format === "telegram") {
    if (req.secret === "") throw invalid("secret: a Telegram webhook needs the bot token (from @BotFather)");
    if (!/^-?[0-9]{1,20}$|^@[A-Za-z0-9_]{4,64}$/.test(req.chatId)) {
      throw invalid("chat_id: a Telegram webhook needs the chat id (a number, or @channelname)");
    }
  } else if (req.chatId !== "") {
    throw invalid("chat_id: only a Telegram webhook takes a chat id");
  }
  if (req.nodeFilter !== "" && !/^[a-z][a-z0-9-]{0,62}$/.test(req.nodeFilter)) {
    throw invalid(`node_filter: ${JSON.stringify(req.nodeFilter.slice(0, 60))} is not a node id`);
  }
  if (req.sessionPattern.length > 64 || !/^[A-Za-z0-9_*?-]*$/.test(req.sessionPattern)) {
    throw invalid("session_pattern: a glob of letters, digits, '_', '-', '*' and '?', at most 64 characters");
  }
  const kinds = req.kinds.map((k) => {
    const name = KIND_NAMES[k];
    if (!name) throw invalid("kinds: only PROMPT and TURN_FINISHED can be chosen");
    return name;
  });
  return {
    id: req.webhookId,
    url,
    format,
    secret: req.secret,
    chatId: req.chatId,
    nodeFilter: req.nodeFilter,
    sessionPattern: req.sessionPattern,
    kinds: [...new Set(kinds)],
    createTime: Date.now(),
  };
}

/** An https URL, or http to this machine (a local ntfy, a test receiver); INVALID_ARGUMENT otherwise. */
function checkUrl(value: string, field: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid(`${field}: ${JSON.stringify(value.slice(0, 80))} is not a URL`);
  }
  if (value.length > MAX_URL) throw invalid(`${field}: longer than ${MAX_URL} characters`);
  if (url.username !== "" || url.password !== "") throw invalid(`${field}: must not hold a user name or password`);
  const loopback = url.hostname === "localhost" || url.hostname === "[::1]" || url.hostname.startsWith("127.");
  if (url.protocol === "https:" || (url.protocol === "http:" && loopback)) return url.href;
  throw invalid(`${field}: must be an https URL (or http on this machine), not ${url.protocol}//${url.host}`);
}

function checkKey(value: string, bytes: number, field: string): void {
  const decoded = /^[A-Za-z0-9_-]+={0,2}$/.test(value) ? Buffer.from(value, "base64url") : Buffer.alloc(0);
  if (decoded.length !== bytes || (field === "p256dh" && decoded[0] !== 4)) {
    throw invalid(`${field}: must be ${bytes} bytes, base64url, as the browser's subscription gives it`);
  }
}

function checkDisplayName(value: string): string {
  const name = value.trim();
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (name.length === 0 || [...name].length > MAX_DISPLAY_NAME || /[\u0000-\u001f\u007f-\u009f]/.test(name)) {
    throw invalid(`display_name: 1 to ${MAX_DISPLAY_NAME} printable characters`);
  }
  return name;
}

function idOf(name: string, collection: string, field: string): string {
  const match = new RegExp(`^${collection}/([a-z0-9-]{1,40})$`).exec(name);
  if (!match?.[1])
    throw invalid(`${field}: ${JSON.stringify(name.slice(0, 80))} is not of the form ${collection}/{id}`);
  return match[1];
}

function invalid(message: string): ConnectError {
  return new ConnectError(message, Code.InvalidArgument);
}

function notFound(name: string): ConnectError {
  return new ConnectError(`${name} not found`, Code.NotFound);
}
