// The StarAgent dashboard's service worker. It caches nothing (the dashboard is always what the Hub
// serves); it exists because phones show notifications only through a service worker, and it opens
// the session a review notification names when the notification is clicked.
self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));
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
