import { type Session, SessionStatus, StatusReason } from "../../../gen/staragent/v1/session_pb.js";
import { personIsLooking } from "./attention.js";
import { sessionPath } from "./routes.js";
import { reasonText } from "./session-labels.js";
import type { SessionStore, StoreChange } from "./session-store.js";

/** The page title without anything in review. */
export const BASE_TITLE = "StarAgent";
/** Longest prompt text put in a notification; phones cut earlier anyway. */
const MAX_NOTIFICATION_TEXT = 240;

/** What review alerts need from the app. */
export interface ReviewAlertsOptions {
  readonly store: SessionStore;
  /** The resource name of the session on screen, if any. */
  readonly viewedSession: () => string | undefined;
  /** Whether the person asked for notifications (they also need the browser's permission). */
  readonly notificationsEnabled: () => boolean;
  /** Opens a dashboard path (a notification was clicked). */
  readonly open: (path: string) => void;
}

/**
 * Keeps the count of sessions in review in the page title and the favicon, and raises a notification
 * when a session enters review (saying what is pending), except for the session the person is looking
 * at. Notifications of a session are replaced by its newer one and closed once it leaves review.
 */
export class ReviewAlerts {
  private unsubscribe: (() => void) | undefined;
  private readonly pending = new Map<string, Promise<void>>();
  private lastCount = -1;
  private iconLink: HTMLLinkElement | undefined;
  /** Notifications raised by this page, for tests and troubleshooting. */
  raised = 0;
  /** How the newest notification went: through the worker, as a page notification, or why it failed. */
  lastOutcome = "";

  constructor(private readonly options: ReviewAlertsOptions) {}

  start(): void {
    this.unsubscribe = this.options.store.subscribe((change) => this.onChange(change));
    navigator.serviceWorker?.addEventListener("message", this.onWorkerMessage);
    this.updateTitle();
  }

  stop(): void {
    this.unsubscribe?.();
    navigator.serviceWorker?.removeEventListener("message", this.onWorkerMessage);
  }

  /** Shows a sample notification, so a person can check that notifications reach them. */
  async test(): Promise<boolean> {
    if (typeof Notification === "undefined" || Notification.permission !== "granted") return false;
    const registration = await navigator.serviceWorker?.getRegistration().catch(() => undefined);
    const options: NotificationOptions = {
      body: "Notifications from this dashboard reach you.",
      tag: "staragent-test",
      icon: "/favicon.svg",
    };
    try {
      if (registration) {
        if (!registration.active) await navigator.serviceWorker.ready;
        await registration.showNotification("StarAgent", options);
      } else {
        new Notification("StarAgent", options);
      }
      return true;
    } catch {
      return false;
    }
  }

  /** Asks the browser for permission and registers the worker that shows notifications on phones. */
  static async enable(): Promise<NotificationPermission | "unsupported"> {
    if (typeof Notification === "undefined") return "unsupported";
    const permission =
      Notification.permission === "default" ? await Notification.requestPermission() : Notification.permission;
    if (permission === "granted") await registerWorker();
    return permission;
  }

  private readonly onWorkerMessage = (e: MessageEvent) => {
    const data = e.data as { type?: unknown; path?: unknown } | null;
    if (data?.type === "staragent-open" && typeof data.path === "string" && data.path.startsWith("/")) {
      this.options.open(data.path);
    }
  };

  private onChange(change: StoreChange): void {
    this.updateTitle();
    if (change.initial) return;
    for (const { session, before } of change.changed) {
      if (enteredReview(session, before)) this.inOrder(session.name, () => this.notify(session));
      else if (before?.status === SessionStatus.REVIEW && session.status !== SessionStatus.REVIEW) {
        this.inOrder(session.name, () => closeNotifications(session.name));
      }
    }
    for (const name of change.removed) this.inOrder(name, () => closeNotifications(name));
  }

  /**
   * Runs a session's notification work in the order its events came: showing and closing are
   * asynchronous, and a close must never overtake the show of a later review of the same session.
   */
  private inOrder(name: string, work: () => Promise<void>): void {
    const next = (this.pending.get(name) ?? Promise.resolve()).then(work).catch(() => undefined);
    this.pending.set(name, next);
    void next.then(() => {
      if (this.pending.get(name) === next) this.pending.delete(name);
    });
  }

  private updateTitle(): void {
    const count = this.options.store.reviewCount();
    if (count === this.lastCount) return;
    this.lastCount = count;
    document.title = count > 0 ? `(${count}) ${BASE_TITLE} · ${count} in review` : BASE_TITLE;
    if (!this.iconLink) {
      this.iconLink = document.querySelector<HTMLLinkElement>('link[rel="icon"]') ?? undefined;
    }
    if (this.iconLink) this.iconLink.href = faviconUrl(count);
  }

  private async notify(s: Session): Promise<void> {
    if (!this.options.notificationsEnabled()) return;
    if (typeof Notification === "undefined" || Notification.permission !== "granted") return;
    if (s.nodeUnreachable) return;
    if (personIsLooking() && this.options.viewedSession() === s.name) return;
    const title = `${s.tmuxSession} needs you`;
    const reason = reasonText(s);
    const body = `${reason.length > MAX_NOTIFICATION_TEXT ? `${reason.slice(0, MAX_NOTIFICATION_TEXT)}…` : reason}\n${s.node} · ${s.cwd}`;
    const path = sessionPath(s.node, s.tmuxSession);
    const options: NotificationOptions = { body, tag: `review:${s.name}`, data: { path }, icon: "/favicon.svg" };
    this.raised++;
    const registration = await navigator.serviceWorker?.getRegistration().catch(() => undefined);
    if (registration) {
      try {
        // A worker registered moments ago may still be installing; notifications need it active.
        if (!registration.active) await navigator.serviceWorker.ready;
        await registration.showNotification(title, options);
        this.lastOutcome = "worker";
        return;
      } catch (err) {
        // Fall back to a page notification below (desktop browsers show those).
        this.lastOutcome = `worker failed: ${err instanceof Error ? err.message : String(err)}`;
      }
    }
    try {
      const n = new Notification(title, options);
      n.onclick = () => {
        window.focus();
        this.options.open(path);
        n.close();
      };
      this.lastOutcome = `${this.lastOutcome} page`.trim();
    } catch (err) {
      // Phones refuse page notifications without a worker; nothing more can be done here.
      this.lastOutcome = `${this.lastOutcome}; page failed: ${err instanceof Error ? err.message : String(err)}`;
    }
  }
}

/** Registers the notification worker (a no-op where service workers are unavailable, e.g. plain http on a LAN). */
export async function registerWorker(): Promise<void> {
  if (!("serviceWorker" in navigator)) return;
  try {
    await navigator.serviceWorker.register("/sw.js", { scope: "/" });
  } catch {
    // Without the worker, desktop browsers still show `new Notification`.
  }
}

function enteredReview(s: Session, before: Session | undefined): boolean {
  if (s.status !== SessionStatus.REVIEW) return false;
  if (!before || before.status !== SessionStatus.REVIEW) return true;
  return s.statusReason === StatusReason.UNSEEN_COMPLETION && s.completionId !== before.completionId;
}

async function closeNotifications(name: string): Promise<void> {
  const registration = await navigator.serviceWorker?.getRegistration().catch(() => undefined);
  if (!registration) return;
  for (const n of await registration.getNotifications({ tag: `review:${name}` })) n.close();
}

/** The favicon: the StarAgent star, with the review count in a badge when there is one. */
export function faviconUrl(count: number): string {
  const star =
    '<rect width="64" height="64" rx="14" fill="#2f5bd3"/><path fill="#fff" d="M32 9l6.9 14.6 16 1.9-11.8 11 3.1 15.8L32 44.5l-14.2 7.8 3.1-15.8-11.8-11 16-1.9z"/>';
  const text = count > 9 ? "9+" : String(count);
  const badge =
    count > 0
      ? `<circle cx="46" cy="18" r="17" fill="#d9480f" stroke="#fff" stroke-width="3"/><text x="46" y="25" font-family="Arial,sans-serif" font-size="${text.length > 1 ? 17 : 21}" font-weight="700" text-anchor="middle" fill="#fff">${text}</text>`
      : "";
  return `data:image/svg+xml,${encodeURIComponent(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64">${star}${badge}</svg>`)}`;
}
