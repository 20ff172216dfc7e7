import { join } from "node:path";
import * as v from "valibot";
import { JsonFile, schemaValidator } from "../../common/json-file.js";
import type { Logger } from "../../common/log.js";

/**
 * A device subscribed to Web Push as stored in `push-subscriptions.json` (mode 0600: an endpoint and
 * its keys are what lets anyone push to that device).
 */
const StoredPushSubscriptionSchema = v.object({
  id: v.string(),
  endpoint: v.string(),
  p256dh: v.string(),
  auth: v.string(),
  displayName: v.string(),
  createTime: v.number(),
  lastDeliveryTime: v.optional(v.number()),
});

/** A device subscribed to Web Push, as stored. */
export type StoredPushSubscription = v.InferOutput<typeof StoredPushSubscriptionSchema>;

/** A webhook as stored in `webhooks.json` (mode 0600: it holds bot tokens and secret URLs). */
const StoredWebhookSchema = v.object({
  id: v.string(),
  url: v.string(),
  format: v.picklist(["generic", "ntfy", "slack", "discord", "telegram", "lark"]),
  secret: v.string(),
  chatId: v.string(),
  nodeFilter: v.string(),
  sessionPattern: v.string(),
  /** Notification kinds by name ("prompt", "turn-finished"); empty for every kind. */
  kinds: v.array(v.picklist(["prompt", "turn-finished"])),
  createTime: v.number(),
});

/** A webhook, as stored. */
export type StoredWebhook = v.InferOutput<typeof StoredWebhookSchema>;

/** A webhook body format's name, as stored and as `staragent notify add --format` takes it. */
export type WebhookFormatName = StoredWebhook["format"];

/** What a notification is about, by name, as stored in webhook filters. */
export type KindName = StoredWebhook["kinds"][number];

/**
 * `notified.json`: per session, the keys (prompt fingerprint or completion id) already notified, the
 * newest last, with when the newest was. Read again after a restart, so neither a Hub restart nor a
 * Node coming back re-notifies what went out already.
 */
const NotifiedSchema = v.record(
  v.string(),
  v.object({
    keys: v.array(v.string()),
    time: v.number(),
  }),
);

/** The notified keys per session, as stored. */
export type Notified = v.InferOutput<typeof NotifiedSchema>;

/** The Hub's notification files, under its home. */
export interface NotificationFiles {
  readonly subscriptions: JsonFile<StoredPushSubscription[]>;
  readonly webhooks: JsonFile<StoredWebhook[]>;
  readonly notified: JsonFile<Notified | null>;
}

/**
 * Opens the notification files under `home`. `notified.json` reads as null when it does not exist
 * yet: the Hub's first watch then only records what is in review, instead of notifying every session
 * that was in review before notifications were set up.
 */
export function openNotificationFiles(home: string, log: Logger): NotificationFiles {
  return {
    subscriptions: new JsonFile(
      join(home, "push-subscriptions.json"),
      schemaValidator(v.array(StoredPushSubscriptionSchema), "push-subscriptions.json"),
      () => [],
      log,
    ),
    webhooks: new JsonFile(
      join(home, "webhooks.json"),
      schemaValidator(v.array(StoredWebhookSchema), "webhooks.json"),
      () => [],
      log,
    ),
    notified: new JsonFile(
      join(home, "notified.json"),
      schemaValidator(v.nullable(NotifiedSchema), "notified.json"),
      () => null,
      log,
    ),
  };
}
