import { type Client, Code, ConnectError } from "@connectrpc/connect";
import type { NotificationService } from "../../../gen/staragent/v1/notification_service_pb.js";
import { loginKey } from "../api/login-key.js";

/** The localStorage key of this device's subscription on the Hub (`pushSubscriptions/{id}` and its name). */
export const PUSH_DEVICE_KEY = "staragent.pushDevice";
/** How often a visible page tells the Hub again which session it shows (the Hub's hold is longer). */
export const VIEWING_REPORT_MS = 10_000;

/**
 * Where the service worker finds this device (its cache and the record's URL, the same in
 * web/public/sw.js): a browser that renews the subscription tells only the worker, which then tells
 * the Hub with the login's key and which endpoint the new one replaces. Cache Storage, because a
 * worker has no localStorage; it is scoped to the page's origin as localStorage is.
 */
export const WORKER_CACHE = "staragent-push";
export const WORKER_RECORD_URL = "/staragent-push-device.json";

/** What the service worker keeps of this device to renew its subscription. */
export interface WorkerRecord extends PushDevice {
  readonly endpoint: string;
  readonly loginKey: string;
}

/** This device's subscription as the page remembers it. */
export interface PushDevice {
  readonly name: string;
  readonly displayName: string;
}

/** Where the page keeps what it remembers (localStorage; tests pass a Map-backed one). */
export type DeviceStorage = Pick<Storage, "getItem" | "setItem" | "removeItem">;

/** The device this page subscribed, or undefined (never subscribed, or storage unreadable). */
export function storedDevice(storage: DeviceStorage | undefined): PushDevice | undefined {
  try {
    const parsed = JSON.parse(storage?.getItem(PUSH_DEVICE_KEY) ?? "null") as Partial<PushDevice> | null;
    if (typeof parsed?.name === "string" && typeof parsed.displayName === "string") {
      return { name: parsed.name, displayName: parsed.displayName };
    }
  } catch {
    // Unreadable: as if never subscribed.
  }
  return undefined;
}

/**
 * A name people recognise for this device, from the browser's user agent ("Android, Chrome",
 * "iPhone, Safari", "Linux, Firefox"); they can change it in the settings.
 */
export function guessDeviceName(userAgent: string): string {
  const os = /Android/.test(userAgent)
    ? "Android"
    : /iPhone/.test(userAgent)
      ? "iPhone"
      : /iPad/.test(userAgent)
        ? "iPad"
        : /Mac OS X/.test(userAgent)
          ? "Mac"
          : /Windows/.test(userAgent)
            ? "Windows"
            : /Linux|X11/.test(userAgent)
              ? "Linux"
              : "Device";
  const browser = /Edg\//.test(userAgent)
    ? "Edge"
    : /Firefox\//.test(userAgent)
      ? "Firefox"
      : /Chrome\/|Chromium\//.test(userAgent)
        ? "Chrome"
        : /Safari\//.test(userAgent)
          ? "Safari"
          : "";
  return browser ? `${os}, ${browser}` : os;
}

/**
 * Subscribes this browser to Web Push with the Hub's VAPID key (through the service worker's
 * `pushManager`) and stores the subscription on the Hub under `displayName`; remembers it. Throws
 * with a sentence for people when the browser cannot (no service worker: plain http beyond loopback;
 * iOS outside a home-screen app) or refuses.
 */
export async function subscribeDevice(
  client: Client<typeof NotificationService>,
  displayName: string,
  storage: DeviceStorage | undefined,
): Promise<PushDevice> {
  if (!("serviceWorker" in navigator) || typeof PushManager === "undefined") {
    throw new Error(
      "This browser offers no Web Push here: it needs https (or this machine's own address), and on iOS the dashboard added to the home screen.",
    );
  }
  const registration = await navigator.serviceWorker.ready;
  const { publicKey } = await client.getVapidPublicKey({});
  const subscription =
    (await registration.pushManager.getSubscription()) ??
    (await registration.pushManager.subscribe({
      userVisibleOnly: true,
      applicationServerKey: base64UrlBytes(publicKey),
    }));
  const json = subscription.toJSON();
  const res = await client.addPushSubscription({
    endpoint: json.endpoint ?? subscription.endpoint,
    p256dh: json.keys?.p256dh ?? "",
    auth: json.keys?.auth ?? "",
    displayName,
  });
  const device = { name: res.subscription?.name ?? "", displayName: res.subscription?.displayName ?? displayName };
  storage?.setItem(PUSH_DEVICE_KEY, JSON.stringify(device));
  await writeWorkerRecord({ ...device, endpoint: json.endpoint ?? subscription.endpoint, loginKey: loginKey() });
  return device;
}

/** What the service worker keeps of this device, if anything. */
export async function readWorkerRecord(): Promise<WorkerRecord | undefined> {
  try {
    const res = await (await caches.open(WORKER_CACHE)).match(WORKER_RECORD_URL);
    return res ? ((await res.json()) as WorkerRecord) : undefined;
  } catch {
    return undefined;
  }
}

async function writeWorkerRecord(record: WorkerRecord): Promise<void> {
  try {
    const body = JSON.stringify(record);
    const cache = await caches.open(WORKER_CACHE);
    await cache.put(WORKER_RECORD_URL, new Response(body, { headers: { "content-type": "application/json" } }));
  } catch {
    // No Cache Storage (plain http beyond loopback): no service worker either, so nothing renews.
  }
}

/**
 * Gives the worker's record this page's login key when it changed (a new login): the worker's call
 * to the Hub after a renewal needs the key of a login that is still valid.
 */
export async function refreshWorkerRecord(): Promise<void> {
  const record = await readWorkerRecord();
  const key = loginKey();
  if (record && key !== "" && record.loginKey !== key) await writeWorkerRecord({ ...record, loginKey: key });
}

/** Forgets this device on the Hub (one already gone there is fine) and in the browser. */
export async function unsubscribeDevice(
  client: Client<typeof NotificationService>,
  storage: DeviceStorage | undefined,
): Promise<void> {
  const device = storedDevice(storage);
  if (device) {
    try {
      await client.removePushSubscription({ name: device.name });
    } catch (err) {
      if (!(err instanceof ConnectError && err.code === Code.NotFound)) throw err;
    }
  }
  storage?.removeItem(PUSH_DEVICE_KEY);
  await globalThis.caches?.delete(WORKER_CACHE).catch(() => false);
  const registration = await navigator.serviceWorker?.getRegistration().catch(() => undefined);
  const subscription = await registration?.pushManager?.getSubscription().catch(() => null);
  await subscription?.unsubscribe().catch(() => false);
}

/** What the viewing reporter needs from the page. */
export interface ViewingReporterOptions {
  readonly client: Client<typeof NotificationService>;
  readonly device: () => PushDevice | undefined;
  /** The session on screen (`nodes/{node}/sessions/{id}`), if any. */
  readonly viewedSession: () => string | undefined;
  readonly visible: () => boolean;
  /** Where visibility changes are heard (the document; tests pass their own). */
  readonly events?: EventTarget | undefined;
}

/**
 * Tells the Hub which session this device's page shows while it is visible, so this device alone
 * gets no push for it (every other device and webhook still does). Reports at once on a change and
 * every VIEWING_REPORT_MS while visible; a hidden page reports `visible` false at once.
 */
export class ViewingReporter {
  private timer: ReturnType<typeof setInterval> | undefined;
  private last = "";

  constructor(private readonly options: ViewingReporterOptions) {}

  start(): void {
    // The page a device reports from is where its current login key lives: the worker gets it too.
    if (this.options.device()) void refreshWorkerRecord();
    (this.options.events ?? document).addEventListener("visibilitychange", this.changed);
    this.timer = setInterval(() => this.report(true), VIEWING_REPORT_MS);
    this.changed();
  }

  stop(): void {
    (this.options.events ?? document).removeEventListener("visibilitychange", this.changed);
    clearInterval(this.timer);
  }

  /** Reports now when what the page shows changed (a route change, a visibility change). */
  readonly changed = (): void => this.report(false);

  private report(again: boolean): void {
    const device = this.options.device();
    if (!device) return;
    const visible = this.options.visible();
    const session = visible ? (this.options.viewedSession() ?? "") : "";
    const state = `${device.name}|${session}`;
    if (state === this.last && !(again && session !== "")) return;
    this.last = state;
    this.options.client.reportViewing({ subscription: device.name, session, visible: session !== "" }).catch(() => {
      // The next report (or the Hub's hold running out) puts it right.
      this.last = "";
    });
  }
}

/** A base64url string as bytes (the VAPID key for `applicationServerKey`). */
function base64UrlBytes(text: string): Uint8Array<ArrayBuffer> {
  const base64 = text
    .replace(/-/g, "+")
    .replace(/_/g, "/")
    .padEnd(Math.ceil(text.length / 4) * 4, "=");
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
