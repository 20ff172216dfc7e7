import { type Session, SessionStatus, StatusReason } from "../../../gen/staragent/v1/session_pb.js";
import { personIsLooking } from "./attention.js";
import { pendingPromptWants } from "./prompt-summary.js";
import { sessionPath } from "./routes.js";
import { reasonText } from "./session-labels.js";
import type { SessionStore, StoreChange } from "./session-store.js";

/** The page title without anything in review. */
export const BASE_TITLE = "StarAgent";
/** Longest prompt text put in a notification; phones cut earlier anyway. */
const MAX_NOTIFICATION_TEXT = 240;
/**
 * How long a session must have been working before its going idle is worth a notification: a build or
 * a test run, not every short command typed into a shell.
 */
export const IDLE_NOTIFY_AFTER_MS = 10_000;

/** What review alerts need from the app. */
export interface ReviewAlertsOptions {
  readonly store: SessionStore;
  /** The resource name of the session on screen, if any. */
  readonly viewedSession: () => string | undefined;
  /** Whether the person asked for notifications (they also need the browser's permission). */
  readonly notificationsEnabled: () => boolean;
  /** Opens a dashboard path (a notification was clicked). */
  readonly open: (path: string) => void;
  /** Overrides IDLE_NOTIFY_AFTER_MS (tests). */
  readonly idleNotifyAfterMs?: number;
}

/**
 * Keeps the count of sessions in review in the page title and the favicon, and raises notifications,
 * except for the session the person is looking at: when a session enters review (saying what is
 * pending: its input prompt, or a finished turn), and when one goes from working to idle without a
 * turn to review (a shell's command ended). Each kind has its own tag: a session's notification of a
 * kind replaces its older one, and is closed once the session has left that state.
 */
export class ReviewAlerts {
  private unsubscribe: (() => void) | undefined;
  /** The tail of the notification work queue (see inOrder). */
  private work: Promise<void> = Promise.resolve();
  /** When each session now working was first seen working by this page. */
  private readonly workingSince = new Map<string, number>();
  private lastCount = -1;
  private iconLink: HTMLLinkElement | undefined;
  /** Notifications raised by this page, for tests and troubleshooting. */
  raised = 0;
  /** How the newest notification went: through the worker, as a page notification, or why it failed. */
  lastOutcome = "";

  private readonly idleNotifyAfterMs: number;

  constructor(private readonly options: ReviewAlertsOptions) {
    this.idleNotifyAfterMs = options.idleNotifyAfterMs ?? IDLE_NOTIFY_AFTER_MS;
  }

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
    let shown = false;
    this.inOrder(async () => {
      shown = await showTestNotification();
    });
    await this.settled();
    return shown;
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
      const since = this.workingSince.get(session.name);
      if (session.status === SessionStatus.WORKING) {
        if (since === undefined) this.workingSince.set(session.name, Date.now());
      } else {
        this.workingSince.delete(session.name);
      }
      const workedLong = since !== undefined && Date.now() - since >= this.idleNotifyAfterMs;
      if (enteredReview(session, before) || (workedLong && wentIdle(session, before))) {
        this.inOrder(() => this.notify(session));
      }
      if (before && before.status !== session.status) {
        const left = tagOf(before);
        if (left) this.inOrder(() => closeNotifications(left));
      }
    }
    for (const name of change.removed) {
      this.workingSince.delete(name);
      this.inOrder(async () => {
        await closeNotifications(`review:${name}`);
        await closeNotifications(`idle:${name}`);
      });
    }
  }

  /**
   * Runs notification work (showing and closing, of every session) one piece at a time, in the order
   * the events came. Showing and closing are asynchronous: a close must never overtake the show of a
   * later review of the same session, and Chromium drops a notification from getNotifications() for
   * good when it is listed while another is still being shown, so a close-by-tag running beside a show
   * would leave that notification impossible to close.
   */
  private inOrder(work: () => Promise<void>): void {
    this.work = this.work.then(work).catch(() => undefined);
  }

  /** Resolves once every notification shown or closed so far has been (tests and troubleshooting). */
  async settled(): Promise<void> {
    let tail: Promise<void>;
    do {
      tail = this.work;
      await tail;
    } while (tail !== this.work);
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
    const title = `${s.tmuxSession} ${notificationVerb(s)}`;
    const reason = reasonText(s);
    const body = `${reason.length > MAX_NOTIFICATION_TEXT ? `${reason.slice(0, MAX_NOTIFICATION_TEXT)}…` : reason}\n${s.node} · ${s.cwd}`;
    const path = sessionPath(s.node, s.tmuxSession);
    const options: NotificationOptions = { body, tag: tagOf(s), data: { path }, icon: "/favicon.svg" };
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

/** Shows the sample notification of ReviewAlerts.test. */
async function showTestNotification(): Promise<boolean> {
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

/**
 * Working → idle with nothing to review: a command or a run ended. Not an interrupt (the person did
 * it) and not a turn seen at once (the person was looking).
 */
function wentIdle(s: Session, before: Session | undefined): boolean {
  return (
    before?.status === SessionStatus.WORKING &&
    s.status === SessionStatus.IDLE &&
    s.statusReason !== StatusReason.INTERRUPTED &&
    s.statusReason !== StatusReason.SEEN_COMPLETION
  );
}

/** The tag of a session's notification for the state it is in ("" when that state raises none). */
function tagOf(s: Session): string {
  if (s.status === SessionStatus.REVIEW) return `review:${s.name}`;
  if (s.status === SessionStatus.IDLE) return `idle:${s.name}`;
  return "";
}

/** What a notification's title says the session did. */
function notificationVerb(s: Session): string {
  if (s.status === SessionStatus.IDLE) return "is idle";
  if (s.statusReason === StatusReason.INPUT_PROMPT)
    return `on ${s.node} ${pendingPromptWants(s) ?? "needs your input"}`;
  if (s.statusReason === StatusReason.UNSEEN_COMPLETION) return "finished its turn";
  return "needs you";
}

async function closeNotifications(tag: string): Promise<void> {
  const registration = await navigator.serviceWorker?.getRegistration().catch(() => undefined);
  if (!registration) return;
  for (const n of await registration.getNotifications({ tag })) n.close();
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
