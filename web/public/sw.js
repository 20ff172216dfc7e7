// The StarAgent dashboard's service worker. It caches nothing (the dashboard is always what the Hub
// serves); it exists because phones show notifications only through a service worker, it shows the
// Hub's Web Push notifications with no page open, and it opens the session a notification names when
// the notification is clicked.
self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));
// A push from the Hub (decrypted by the browser): `{title, body, tag, path, ...}`. One notification per
// session (its tag, the same the open page uses), replaced as the session changes. The text is shown
// as text by the system, never as HTML.
self.addEventListener("push", (event) => {
  let data = {};
  try {
    data = event.data ? event.data.json() : {};
  } catch {
    data = {};
  }
  const text = (value, fallback) => (typeof value === "string" && value !== "" ? value : fallback);
  const path = typeof data.path === "string" && data.path.startsWith("/") ? data.path : "/";
  event.waitUntil(
    self.registration.showNotification(text(data.title, "StarAgent"), {
      body: text(data.body, "A session needs you."),
      tag: text(data.tag, "staragent"),
      renotify: true,
      data: { path },
      icon: "/favicon.svg",
    }),
  );
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const data = event.notification.data;
  const path = data && typeof data.path === "string" && data.path.startsWith("/") ? data.path : "/";
  event.waitUntil(
    (async () => {
      const url = new URL(path, self.location.origin);
      const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
      const client = windows.find((c) => new URL(c.url).origin === url.origin);
      if (client) {
        // The page opens the session first: a browser may refuse the focus, never the message.
        client.postMessage({ type: "staragent-open", path: url.pathname });
        await client.focus().catch(() => undefined);
        return;
      }
      await self.clients.openWindow(url.href);
    })(),
  );
});

// What the settings page left for this worker when it subscribed the device (push-device.ts,
// WORKER_RECORD_URL): the device's name on the Hub, its endpoint then, and the login's key the Hub
// wants beside the login cookie. Kept in this origin's Cache Storage, which the worker can read
// (it has no localStorage).
const DEVICE_CACHE = "staragent-push";
const DEVICE_RECORD = "/staragent-push-device.json";

async function readDevice() {
  const cache = await caches.open(DEVICE_CACHE);
  const res = await cache.match(DEVICE_RECORD);
  if (!res) return undefined;
  try {
    return await res.json();
  } catch {
    return undefined;
  }
}

async function writeDevice(device) {
  const cache = await caches.open(DEVICE_CACHE);
  await cache.put(
    DEVICE_RECORD,
    new Response(JSON.stringify(device), { headers: { "content-type": "application/json" } }),
  );
}

// One NotificationService call in the Connect protocol's JSON form, with the login cookie (same
// origin) and the login's key.
async function callHub(method, body, loginKey) {
  const res = await fetch(`/staragent.v1.NotificationService/${method}`, {
    method: "POST",
    headers: { "content-type": "application/json", "staragent-login-key": loginKey },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method}: HTTP ${res.status}`);
  return res.json();
}

function keyBytes(base64url) {
  const base64 = base64url.replace(/-/g, "+").replace(/_/g, "/");
  const binary = atob(base64.padEnd(Math.ceil(base64.length / 4) * 4, "="));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

// The browser renewed (or dropped) this device's push subscription. Subscribes again with the same
// VAPID key when the browser gave no new subscription, and tells the Hub the new one replaces the old
// (the Hub keeps the device's resource name and the name people gave it); otherwise pushes would stop
// until someone turned them on again. Nothing happens for a browser the settings never subscribed.
async function renewSubscription(oldSubscription, newSubscription) {
  const device = await readDevice();
  if (!device || typeof device.endpoint !== "string") return;
  let subscription = newSubscription;
  if (!subscription) {
    const key =
      oldSubscription?.options?.applicationServerKey ??
      keyBytes((await callHub("GetVapidPublicKey", {}, device.loginKey)).publicKey);
    subscription = await self.registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
  }
  const json = subscription.toJSON();
  const res = await callHub(
    "AddPushSubscription",
    {
      endpoint: json.endpoint ?? subscription.endpoint,
      p256dh: json.keys?.p256dh ?? "",
      auth: json.keys?.auth ?? "",
      replacesEndpoint: oldSubscription?.endpoint ?? device.endpoint,
    },
    device.loginKey,
  );
  await writeDevice({ ...device, name: res.subscription?.name ?? device.name, endpoint: json.endpoint });
}

self.addEventListener("pushsubscriptionchange", (event) => {
  const work = renewSubscription(event.oldSubscription, event.newSubscription).catch((err) => {
    console.warn("StarAgent: could not renew the push subscription", err);
  });
  // A browser's own event keeps the worker alive until the work ends; an event the worker's own
  // script dispatched (which is how a test can send one) refuses waitUntil, and the work runs anyway.
  try {
    event.waitUntil(work);
  } catch {
    // Not the browser's event.
  }
});
