import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DeliveryOutcome, NotificationService } from "../../gen/staragent/v1/notification_service_pb.js";
import { StatusReason } from "../../gen/staragent/v1/session_pb.js";
import { grpcClient } from "../foundation/hub-fixture.js";
import { MockPushService } from "../support/mock-push-service.js";
import { waitFor } from "../support/wait.js";
import { CHROMIUM_ARGS, CHROMIUM_PATH, DESKTOP, OpenPages } from "./support/browser.js";
import { type DashboardFixture, SETUP_TIMEOUT_MS, startDashboard } from "./support/dashboard-fixture.js";
import { clickWorkerNotification } from "./support/dashboard-page.js";
import { DesktopNotifications } from "./support/desktop-notifications.js";

const TEST_TIMEOUT_MS = 90_000;
/** How long after handing a push to the worker with no notification shown it is handed over again. */
const PUSH_REDELIVERY_MS = 5_000;

/**
 * Web Push in chromium: the notification setting subscribes the device and names it; the Hub's
 * encrypted push (caught by a mock push service on loopback, which checks its VAPID JWT and decrypts
 * it) is handed to the service worker through the DevTools protocol, with no dashboard page open; the
 * worker shows it, and its click opens the session. Headless chromium cannot reach a real push
 * service, so only `pushManager.subscribe` is replaced: it answers a subscription whose endpoint is
 * the mock's, with keys the mock holds. Everything after it is real.
 */
describe("Web Push to the dashboard's service worker", () => {
  let f: DashboardFixture;
  const push = new MockPushService();
  const pages = new OpenPages();

  beforeAll(async () => {
    await push.start();
    f = await startDashboard();
  }, SETUP_TIMEOUT_MS);

  afterEach(async () => {
    expect(await pages.closeAll()).toEqual([]);
  });

  afterAll(async () => {
    await f?.close();
    await push.close();
  }, SETUP_TIMEOUT_MS);

  it(
    "subscribes from the settings, shows the Hub's push with no page open, and opens the session on a click",
    async () => {
      const notifications = grpcClient(NotificationService, f.hub.url, f.hub.token);
      const device = push.device("chromium");
      const v = await pages.add(f.browser);
      await v.context.grantPermissions(["notifications"], { origin: f.hub.url });
      await v.page.addInitScript(
        ({ endpoint, p256dh, auth }) => {
          const fake = {
            endpoint,
            expirationTime: null,
            options: { userVisibleOnly: true },
            getKey: () => null,
            toJSON: () => ({ endpoint, expirationTime: null, keys: { p256dh, auth } }),
            unsubscribe: async () => true,
          };
          const calls: unknown[] = [];
          (window as unknown as { pushSubscribeCalls: unknown[] }).pushSubscribeCalls = calls;
          PushManager.prototype.subscribe = async (options?: PushSubscriptionOptionsInit) => {
            calls.push({
              userVisibleOnly: options?.userVisibleOnly,
              key: btoa(String.fromCharCode(...new Uint8Array(options?.applicationServerKey as ArrayBuffer)))
                .replace(/\+/g, "-")
                .replace(/\//g, "_")
                .replace(/=+$/, ""),
            });
            return fake as unknown as PushSubscription;
          };
        },
        { endpoint: device.endpoint, p256dh: device.p256dh, auth: device.auth },
      );
      await f.login(v.page, "/");
      await turnOnPush(v.page);

      // The setting subscribed with the Hub's VAPID key and named the device.
      const { publicKey } = await notifications.getVapidPublicKey({});
      const stored = await waitFor(async () => {
        const list = (await notifications.listPushSubscriptions({})).subscriptions;
        return list.length === 1 && list[0];
      }, "the device subscribed on the Hub");
      expect(stored.displayName).toBe("Linux, Chrome");
      expect(stored.pushService).toBe(push.origin);
      expect(
        await v.page.evaluate(() => (window as unknown as { pushSubscribeCalls: unknown[] }).pushSubscribeCalls),
      ).toEqual([{ userVisibleOnly: true, key: publicKey }]);
      const nameField = v.page.getByLabel("This device's name on the Hub");
      await nameField.fill("Work laptop");
      await nameField.press("Enter");
      await waitFor(
        async () => (await notifications.listPushSubscriptions({})).subscriptions[0]?.displayName === "Work laptop",
        "the device renamed",
      );

      // The page tells the Hub which session it shows: that device gets no push for it.
      await f.sessions.createSession({
        parent: "nodes/local",
        sessionId: "on-screen",
        cwd: f.dir,
        command: ["claude"],
      });
      const onScreen = "nodes/local/sessions/on-screen";
      await waitFor(
        async () => (await f.sessions.getSession({ name: onScreen })).session?.statusReason === StatusReason.NO_TURN,
        "on-screen idle",
        20_000,
      );
      await v.page.keyboard.press("Escape");
      await v.page.click(`a[href="/sessions/local/on-screen"]`);
      await v.page.waitForURL((u) => u.pathname === "/sessions/local/on-screen");
      await f.typeLine("on-screen", "please approve");
      const suppressed = await waitFor(
        async () => (await notifications.listDeliveries({})).deliveries.find((d) => d.session === onScreen),
        "the on-screen session's delivery",
        20_000,
      );
      expect(DeliveryOutcome[suppressed.outcome]).toBe("SUPPRESSED_VIEWING");
      expect(push.received.some((p) => p.plaintext.includes(onScreen))).toBe(false);

      // The service worker's registration, for the DevTools protocol; then no dashboard page is open.
      const cdp = await v.context.newCDPSession(v.page);
      const versions = workerVersions(cdp);
      const registrationId = await registrationOf(cdp, f.hub.url);
      await v.page.goto("about:blank");

      const name = await idleAgent(f, "push-me");
      await f.typeLine("push-me", "please approve");
      // The approval's push (one about a prompt read before the pane showed it may come first).
      const received = await push.waitFor(
        (p) => p.plaintext.includes(name) && p.plaintext.includes("rm -rf build"),
        "for push-me's prompt",
        20_000,
      );
      expect(received.vapidKey).toBe(publicKey);
      expect(JSON.parse(received.plaintext)).toMatchObject({
        title: "push-me on local",
        body: "wants to run `rm -rf build`",
        tag: `review:${name}`,
        path: "/sessions/local/push-me",
      });

      // The push service's part: the browser hands the push to the worker. In two fresh clones' runs
      // no notification showed in 20 s after one delivery, though the worker was running and activated,
      // so this stand-in for a push service delivers again every PUSH_REDELIVERY_MS until one shows.
      // What shows is one notification (one tag), however many deliveries it took.
      let deliveries = 0;
      let deliveredAt = 0;
      const deliver = async () => {
        deliveries++;
        deliveredAt = Date.now();
        await cdp.send("ServiceWorker.deliverPushMessage", {
          origin: new URL(f.hub.url).origin,
          registrationId,
          data: received.plaintext,
        });
      };
      await deliver();
      // The browser may have stopped the idle worker while no page was open; the push starts it again,
      // so the notifications are read from whichever worker is running now.
      let seenWorkers = 0;
      const shown = await waitFor(
        async () => {
          if (Date.now() - deliveredAt > PUSH_REDELIVERY_MS) await deliver();
          const workers = v.context.serviceWorkers();
          seenWorkers = workers.length;
          for (const worker of workers.reverse()) {
            const list = await worker.evaluate(async () => {
              const scope = globalThis as unknown as {
                registration: { getNotifications(): Promise<Array<{ title: string; body: string; tag: string }>> };
              };
              return (await scope.registration.getNotifications()).map((n) => ({
                title: n.title,
                body: n.body,
                tag: n.tag,
              }));
            });
            if (list.length > 0) return { worker, list };
          }
          return false;
        },
        () =>
          `the worker's notification (${deliveries} deliveries; ${seenWorkers} worker(s) running; the worker's versions: ${JSON.stringify(versions.states())})`,
        20_000,
      );
      expect(shown.list).toEqual([
        { title: "push-me on local", body: "wants to run `rm -rf build`", tag: `review:${name}` },
      ]);

      // Its click opens the session in the dashboard. Headless chromium has no notification to click,
      // so the worker gets the click event the browser would send it; a synthetic event carries no
      // user activation, which `clients.openWindow` needs, so a dashboard page is opened (at the list)
      // first and the worker's click takes it to the session.
      await f.login(v.page, "/");
      await clickWorkerNotification(shown.worker);
      const page: Page = v.page;
      await page.waitForURL((u) => u.pathname === "/sessions/local/push-me");
      await page.locator("sa-session-view h1", { hasText: "push-me" }).waitFor();
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "renews a subscription the browser changed (pushsubscriptionchange): the same key, the same device on the Hub",
    async () => {
      const notifications = grpcClient(NotificationService, f.hub.url, f.hub.token);
      const first = push.device("renewing-first");
      const renewed = push.device("renewing-second");
      const v = await pages.add(f.browser);
      await v.context.grantPermissions(["notifications"], { origin: f.hub.url });
      await fakeSubscribe(v.page, first);
      await f.login(v.page, "/");
      await turnOnPush(v.page);
      const before = await waitFor(async () => {
        const list = await notifications.listPushSubscriptions({});
        return list.subscriptions.find((s) => s.displayName === "Linux, Chrome");
      }, "the device subscribed on the Hub");
      const { publicKey } = await notifications.getVapidPublicKey({});

      // The browser renews the subscription and gives the worker no new one: the worker subscribes
      // again (pushManager.subscribe answers the mock's second device, as the browser's push service
      // would answer a new endpoint) and tells the Hub. Headless chromium never fires the event on
      // its own, so it is dispatched in the worker, with the old subscription the browser would pass.
      const worker = v.context.serviceWorkers()[0] ?? (await v.context.waitForEvent("serviceworker"));
      await worker.evaluate(
        ({ endpoint, p256dh, auth, oldEndpoint, key }) => {
          const scope = globalThis as unknown as {
            PushManager: { prototype: { subscribe: (o: { applicationServerKey: ArrayBuffer }) => Promise<unknown> } };
            ExtendableEvent: new (type: string) => Event;
            dispatchEvent(e: Event): boolean;
            renewCalls: string[];
          };
          const bytes = (text: string) =>
            Uint8Array.from(atob(text.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0)).buffer;
          scope.renewCalls = [];
          scope.PushManager.prototype.subscribe = async (options) => {
            const b = new Uint8Array(options.applicationServerKey);
            scope.renewCalls.push(
              btoa(String.fromCharCode(...b))
                .replace(/\+/g, "-")
                .replace(/\//g, "_")
                .replace(/=+$/, ""),
            );
            return { endpoint, toJSON: () => ({ endpoint, keys: { p256dh, auth } }) };
          };
          const event = new scope.ExtendableEvent("pushsubscriptionchange");
          const padded = key.padEnd(Math.ceil(key.length / 4) * 4, "=");
          Object.defineProperty(event, "oldSubscription", {
            value: { endpoint: oldEndpoint, options: { userVisibleOnly: true, applicationServerKey: bytes(padded) } },
          });
          Object.defineProperty(event, "newSubscription", { value: null });
          scope.dispatchEvent(event);
        },
        { ...renewed, oldEndpoint: first.endpoint, key: publicKey },
      );
      // The worker records the new endpoint once the Hub has answered its AddPushSubscription.
      const record = await waitFor(
        () =>
          worker.evaluate(async (endpoint) => {
            const res = await (await caches.open("staragent-push")).match("/staragent-push-device.json");
            const r = res ? ((await res.json()) as { name: string; endpoint: string }) : undefined;
            return r?.endpoint === endpoint ? r : undefined;
          }, renewed.endpoint),
        "the worker told the Hub of the renewed subscription",
      );
      expect(record.name).toBe(before.name);
      const mine = (await notifications.listPushSubscriptions({})).subscriptions.filter((x) => x.name === before.name);
      expect(mine.map((x) => x.displayName)).toEqual(["Linux, Chrome"]);
      expect(await worker.evaluate(() => (globalThis as unknown as { renewCalls: string[] }).renewCalls)).toEqual([
        publicKey,
      ]);
      // The Hub now pushes to the renewed endpoint, under the device's same name.
      const sent = await notifications.testNotification({ target: before.name });
      expect(DeliveryOutcome[sent.delivery?.outcome ?? 0]).toBe("DELIVERED");
      await push.waitFor((p) => p.device === "renewing-second", "the test push to the renewed endpoint");
      expect(push.pushesTo("renewing-first")).toEqual([]);
      await notifications.removePushSubscription({ name: before.name });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "opens the session in a new window when its notification is clicked with no page open (openWindow)",
    async () => {
      // chromium shows the worker's notifications through a desktop notification service on a
      // private D-Bus, which clicks one as a person would: a real click, whose user activation
      // `clients.openWindow` needs. A persistent profile, as a person's browser has: chromium hands a
      // click back only to a profile it can find again.
      const desktop = new DesktopNotifications();
      const profile = await mkdtemp(join(tmpdir(), "sa-push-profile-"));
      let context: BrowserContext | undefined;
      try {
        await desktop.start();
        context = await chromium.launchPersistentContext(profile, {
          ...DESKTOP,
          executablePath: CHROMIUM_PATH,
          headless: true,
          args: CHROMIUM_ARGS,
          env: { ...process.env, DBUS_SESSION_BUS_ADDRESS: desktop.busAddress },
        });
        await context.grantPermissions(["notifications"], { origin: f.hub.url });
        const notifications = grpcClient(NotificationService, f.hub.url, f.hub.token);
        const known = new Set((await notifications.listPushSubscriptions({})).subscriptions.map((s) => s.name));
        const page = context.pages()[0] ?? (await context.newPage());
        await fakeSubscribe(page, push.device("tapped"));
        await f.login(page, "/");
        await turnOnPush(page);
        await waitFor(
          async () => (await notifications.listPushSubscriptions({})).subscriptions.some((s) => !known.has(s.name)),
          "the device subscribed on the Hub",
        );
        const registrationId = await registrationOf(await context.newCDPSession(page), f.hub.url);

        const name = await idleAgent(f, "tap-me");
        // No dashboard page is open from here on. The DevTools protocol's ServiceWorker domain is on
        // page targets only: an about:blank tab (no client of the dashboard) hands the push over.
        const blank = await context.newPage();
        await page.close();
        await f.typeLine("tap-me", "please approve");
        const received = await push.waitFor(
          (p) => p.device === "tapped" && p.plaintext.includes(name) && p.plaintext.includes("rm -rf build"),
          "for tap-me's prompt",
          20_000,
        );
        const blankCdp = await context.newCDPSession(blank);
        await blankCdp.send("ServiceWorker.enable");
        await blankCdp.send("ServiceWorker.deliverPushMessage", {
          origin: new URL(f.hub.url).origin,
          registrationId,
          data: received.plaintext,
        });
        const shown = await desktop.waitForShown((n) => n.summary === "tap-me on local", "for tap-me");
        expect(shown.body).toContain("wants to run `rm -rf build`");
        await blank.close();
        expect(context.pages()).toEqual([]);

        const opened = context.waitForEvent("page");
        desktop.click(shown.id);
        const window = await opened;
        await window.waitForURL((u) => u.pathname === "/sessions/local/tap-me");
        await window.locator("sa-session-view h1", { hasText: "tap-me" }).waitFor();
        expect(context.pages()).toEqual([window]);
      } finally {
        await context?.close();
        await desktop.close();
        await rm(profile, { recursive: true, force: true });
      }
    },
    TEST_TIMEOUT_MS,
  );
});

/** Starts the claude stand-in as session `id` on the Hub's machine and waits until it is idle. */
async function idleAgent(f: DashboardFixture, id: string): Promise<string> {
  await f.sessions.createSession({ parent: "nodes/local", sessionId: id, cwd: f.dir, command: ["claude"] });
  const name = `nodes/local/sessions/${id}`;
  await waitFor(
    async () => (await f.sessions.getSession({ name })).session?.statusReason === StatusReason.NO_TURN,
    `${id} idle`,
    20_000,
  );
  return name;
}

/** Turns on notifications and Web Push in the settings of a logged-in page. */
async function turnOnPush(page: Page): Promise<void> {
  await page.click("details.menu > summary");
  await page.getByLabel("Notify me when a session needs review").check();
  await page.getByLabel("Also with no dashboard page open").check();
}

/** Replaces `pushManager.subscribe` in pages of `v`'s context by one answering the mock's `device`. */
async function fakeSubscribe(page: Page, device: { endpoint: string; p256dh: string; auth: string }): Promise<void> {
  await page.addInitScript(
    ({ endpoint, p256dh, auth }) => {
      PushManager.prototype.subscribe = async () =>
        ({
          endpoint,
          expirationTime: null,
          options: { userVisibleOnly: true },
          getKey: () => null,
          toJSON: () => ({ endpoint, expirationTime: null, keys: { p256dh, auth } }),
          unsubscribe: async () => true,
        }) as unknown as PushSubscription;
    },
    { endpoint: device.endpoint, p256dh: device.p256dh, auth: device.auth },
  );
}

/** The id of the dashboard's service worker registration (ServiceWorker.workerRegistrationUpdated). */
/** The service worker versions the DevTools protocol reports (running status, status), for a failure's message. */
function workerVersions(cdp: { on(event: string, listener: (e: unknown) => void): void }): {
  states(): Array<{ versionId: string; runningStatus: string; status: string }>;
} {
  const latest = new Map<string, { versionId: string; runningStatus: string; status: string }>();
  cdp.on("ServiceWorker.workerVersionUpdated", (e) => {
    for (const v of (e as { versions: Array<{ versionId: string; runningStatus: string; status: string }> }).versions) {
      latest.set(v.versionId, { versionId: v.versionId, runningStatus: v.runningStatus, status: v.status });
    }
  });
  return { states: () => [...latest.values()] };
}

async function registrationOf(
  cdp: {
    send(method: string, params?: object): Promise<unknown>;
    on(event: string, listener: (e: unknown) => void): void;
  },
  hubUrl: string,
): Promise<string> {
  const scope = `${new URL(hubUrl).origin}/`;
  const found = new Promise<string>((resolve) => {
    cdp.on("ServiceWorker.workerRegistrationUpdated", (e) => {
      const registration = (
        e as { registrations: Array<{ registrationId: string; scopeURL: string; isDeleted: boolean }> }
      ).registrations.find((r) => r.scopeURL === scope && !r.isDeleted);
      if (registration) resolve(registration.registrationId);
    });
  });
  await cdp.send("ServiceWorker.enable");
  return found;
}
