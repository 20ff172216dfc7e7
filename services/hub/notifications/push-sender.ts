import { createHash } from "node:crypto";
import webPush from "web-push";
import { type SendResult, sendRequest } from "./http-send.js";
import type { NotificationEvent } from "./notification-events.js";
import type { StoredPushSubscription } from "./notification-store.js";
import type { VapidKeys } from "./vapid-keys.js";

/** How long a push service keeps a push for a device that is offline: a day, then it is stale. */
export const PUSH_TTL_SECONDS = 24 * 60 * 60;

/** What the dashboard's service worker receives (decrypted) in a push. */
export interface PushPayload {
  readonly title: string;
  readonly body: string;
  /** One notification per session: a newer one replaces it. */
  readonly tag: string;
  /** The dashboard path a tap opens. */
  readonly path: string;
  readonly session: string;
  readonly node: string;
  readonly kind: string;
}

/** The payload of a push for `event`: the session, its machine and the summary line, nothing more. */
export function pushPayloadOf(event: NotificationEvent): PushPayload {
  return {
    title: event.title,
    body: event.summary,
    // The open page's own notification of a review has this tag too: one replaces the other.
    tag: event.session === "" ? "staragent-test" : `review:${event.session}`,
    path: event.path,
    session: event.session,
    node: event.node,
    kind: event.kind,
  };
}

/**
 * Sends one push through `web-push`: it encrypts the payload for the subscription's keys (RFC 8291,
 * aes128gcm) and signs the request with the Hub's VAPID keys (RFC 8292); the request itself is sent
 * with fetch (web-push's own sender speaks https only, and takes no timeout of ours). The `Topic`
 * header lets the push service replace an undelivered push of the same session with the newer one.
 */
export function sendPush(
  subscription: StoredPushSubscription,
  event: NotificationEvent,
  keys: VapidKeys,
  subject: string,
  signal?: AbortSignal,
): Promise<SendResult> {
  const details = webPush.generateRequestDetails(
    { endpoint: subscription.endpoint, keys: { p256dh: subscription.p256dh, auth: subscription.auth } },
    JSON.stringify(pushPayloadOf(event)),
    {
      vapidDetails: { subject, publicKey: keys.publicKey, privateKey: keys.privateKey },
      contentEncoding: "aes128gcm",
      TTL: PUSH_TTL_SECONDS,
      urgency: "high",
      topic: topicOf(event.session || "test"),
    },
  );
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(details.headers)) headers[name] = String(value);
  return sendRequest(details.endpoint, { headers, body: new Uint8Array(details.body), signal });
}

/** A push Topic (at most 32 base64url characters) naming one session. */
function topicOf(session: string): string {
  return createHash("sha256").update(session).digest("base64url").slice(0, 32);
}
