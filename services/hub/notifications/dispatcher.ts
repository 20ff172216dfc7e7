import { setTimeout as sleep } from "node:timers/promises";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import {
  type Delivery,
  DeliveryOutcome,
  DeliverySchema,
  NotificationKind,
} from "../../../gen/staragent/v1/notification_service_pb.js";
import { WatchEventType, type WatchSessionsResponse } from "../../../gen/staragent/v1/session_service_pb.js";
import type { Logger } from "../../common/log.js";
import type { DeliveryLog } from "./delivery-log.js";
import { retryable, type SendResult, sendRequest } from "./http-send.js";
import { type NotificationEvent, notificationOf, turnSummary } from "./notification-events.js";
import type { NotificationFiles, Notified, StoredPushSubscription, StoredWebhook } from "./notification-store.js";
import { sendPush } from "./push-sender.js";
import type { VapidKeys } from "./vapid-keys.js";
import { webhookRequest } from "./webhook-formats.js";

/** Attempts per notification and target before it is given up (the first one included). */
export const MAX_ATTEMPTS = 5;
/** Wait before the second attempt; doubles for each later one up to RETRY_MAX_MS. */
export const RETRY_INITIAL_MS = 2_000;
/** Longest wait between two attempts (a receiver's Retry-After is capped to it too). */
export const RETRY_MAX_MS = 60_000;
/** How long a page's ReportViewing holds; the page reports again well before. */
export const VIEWING_TTL_SECONDS = 30;
/** Notified keys kept per session: enough that a prompt shown again later is not news again. */
const KEYS_PER_SESSION = 16;
/** Sessions whose notified keys are kept; the ones notified longest ago go first. */
const MAX_NOTIFIED_SESSIONS = 2_000;
/** Longest wait for a finished turn's reply (its first line is the summary) before sending without it. */
export const REPLY_WAIT_MS = 1_500;
/**
 * Longest wait for a prompt known only from the CLI's state to be read from the screen: the screen
 * read makes it a newer notification of the session (what it asks, with its own fingerprint) that
 * goes instead, so one prompt never sends one vague push and then a second, clear one.
 */
export const PROMPT_DETAIL_WAIT_MS = 1_500;
/** First wait before watching again after the Hub's own watch ended; doubles up to the maximum. */
const REWATCH_INITIAL_MS = 500;
const REWATCH_MAX_MS = 15_000;
/** Longest an added device or webhook waits for the watch to start before its RPC answers anyway. */
const WATCH_START_WAIT_MS = 5_000;

/** Tuning a test or bench may shorten. */
export interface DispatcherTiming {
  readonly retryInitialMs: number;
  readonly retryMaxMs: number;
  readonly maxAttempts: number;
}

/** What the dispatcher is built from. */
export interface DispatcherOptions {
  readonly files: NotificationFiles;
  /** The delivery log (ListDeliveries), persisted under the Hub's home. */
  readonly deliveries: DeliveryLog;
  readonly keys: VapidKeys;
  /** The `sub` of the VAPID JWT: a mailto: or https: contact for push services. */
  readonly vapidSubject: string;
  /** The Hub's merged watch of every node (local and remote); it ends when `signal` aborts. */
  readonly watch: (signal: AbortSignal) => AsyncIterable<WatchSessionsResponse>;
  /** The text of a session's newest reply, for a finished turn's summary (undefined when unread). */
  readonly reply?: (session: string, signal: AbortSignal) => Promise<string | undefined>;
  /** The dashboard's base URL, for the links webhooks carry. */
  readonly dashboardUrl: () => string;
  readonly log: Logger;
  readonly timing?: Partial<DispatcherTiming>;
}

/** Whom one delivery goes to: a subscribed device or a webhook, by resource name. */
export type Target =
  | { readonly type: "push"; readonly name: string; readonly subscription: StoredPushSubscription }
  | { readonly type: "webhook"; readonly name: string; readonly hook: StoredWebhook };

/**
 * Turns the Hub's merged watch into notifications. A session entering review for a prompt or a
 * finished turn not notified before (its key, persisted in `notified.json`) goes to every push
 * subscription and every webhook whose filters take it, each delivery on its own with retries and
 * backoff: a slow or failing receiver never holds up the watch or another receiver. A push is left
 * out for one device only: the one whose own page reported that session open and visible. A newer
 * notification of a session supersedes an older one still on its way to the same target (waiting for
 * its reply's summary, its retry, or its receiver's answer): the older is dropped, so it never
 * arrives after the newer one or in its place.
 */
export class NotificationDispatcher {
  private readonly abort = new AbortController();
  /**
   * Per session, its newest notification: what ends the deliveries of the one before (their retries,
   * their requests under way) is aborted when a newer one comes. Insertion order is age order.
   */
  private readonly newest = new Map<string, AbortController>();
  private readonly viewing = new Map<string, { session: string; until: number }>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly timing: DispatcherTiming;
  private notified: Notified = {};
  /** True until the first snapshot after `notified.json` was first made: it only records. */
  private baseline = false;
  private running: Promise<void> | undefined;
  /** Ends the watch under way (targetsChanged: nobody left to notify). */
  private watchAbort: AbortController | undefined;
  /** Wakes the loop waiting for a first target (targetsChanged). */
  private wake: (() => void) | undefined;
  /** Resolve when the watch under way has delivered its first snapshot. */
  private snapshotWaiters: Array<() => void> = [];
  private watching = false;
  /** Called with each attempt as it is logged (tests and the bench wait on these). */
  onDelivery: ((delivery: Delivery) => void) | undefined;

  constructor(private readonly options: DispatcherOptions) {
    this.timing = {
      retryInitialMs: options.timing?.retryInitialMs ?? RETRY_INITIAL_MS,
      retryMaxMs: options.timing?.retryMaxMs ?? RETRY_MAX_MS,
      maxAttempts: options.timing?.maxAttempts ?? MAX_ATTEMPTS,
    };
  }

  /** Reads what was notified before and starts following the watch. */
  async start(): Promise<void> {
    await this.options.deliveries.load();
    const stored = await this.options.files.notified.read();
    this.baseline = stored === null;
    this.notified = stored ?? {};
    this.running = this.follow();
  }

  /** Stops the watch and waits for deliveries under way to end (their retries are dropped). */
  async close(): Promise<void> {
    this.abort.abort();
    for (const done of this.snapshotWaiters.splice(0)) done();
    await this.running;
    await Promise.allSettled([...this.inFlight]);
    await this.options.deliveries.flush();
  }

  /** The delivery log, newest first, of one target or all. */
  listDeliveries(target: string, limit: number): Delivery[] {
    return this.options.deliveries.list(target, limit);
  }

  /** Records what a device's page shows (see ReportViewing); answers how long it holds. */
  reportViewing(subscription: string, session: string, visible: boolean): number {
    if (session === "" || !visible) this.viewing.delete(subscription);
    else this.viewing.set(subscription, { session, until: Date.now() + VIEWING_TTL_SECONDS * 1000 });
    return VIEWING_TTL_SECONDS;
  }

  /** Sends `event` to one target once, no retries (TestNotification); answers its delivery. */
  async test(target: Target, event: NotificationEvent): Promise<Delivery> {
    return (await this.attempt(target, event, 1, true, this.abort.signal)).delivery;
  }

  /**
   * Says that devices or webhooks were added or removed. The watch runs only while there is someone
   * to notify: a Hub's merged watch keeps every machine's watch loop running, and API reads of a
   * machine whose loop runs answer from its model, where a session made outside StarAgent shows only
   * at the loop's next look. Resolves once the watch this change starts (if any) has its snapshot,
   * so that a review after AddPushSubscription or AddWebhook returns is notified.
   */
  async targetsChanged(): Promise<void> {
    if (!(await this.hasTargets())) {
      this.watchAbort?.abort();
      return;
    }
    if (this.watching) return;
    const started = new Promise<void>((resolve) => this.snapshotWaiters.push(resolve));
    this.wake?.();
    await Promise.race([
      started,
      sleep(WATCH_START_WAIT_MS, undefined, { signal: this.abort.signal }).catch(() => undefined),
    ]);
  }

  private async hasTargets(): Promise<boolean> {
    const [subscriptions, hooks] = await Promise.all([
      this.options.files.subscriptions.read().catch(() => []),
      this.options.files.webhooks.read().catch(() => []),
    ]);
    return subscriptions.length > 0 || hooks.length > 0;
  }

  /**
   * Follows the watch until closed while there are targets, watching again with backoff when it
   * ends. A watch started because the first target came records what is in review then without
   * notifying it (it was news before anyone asked), as the very first start does.
   */
  private async follow(): Promise<void> {
    const signal = this.abort.signal;
    let backoff = REWATCH_INITIAL_MS;
    let idle = false;
    while (!signal.aborted) {
      const woken = new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      if (!(await this.hasTargets())) {
        idle = true;
        // Closed while the files were read: the abort event has been and gone.
        if (signal.aborted) return;
        await Promise.race([
          woken,
          new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true })),
        ]);
        continue;
      }
      if (idle) this.baseline = true;
      idle = false;
      const watchAbort = new AbortController();
      this.watchAbort = watchAbort;
      this.watching = true;
      try {
        for await (const event of this.options.watch(AbortSignal.any([signal, watchAbort.signal]))) {
          backoff = REWATCH_INITIAL_MS;
          this.onWatchEvent(event);
          if (event.type === WatchEventType.SNAPSHOT) for (const done of this.snapshotWaiters.splice(0)) done();
        }
      } catch (err) {
        if (signal.aborted) return;
        if (!watchAbort.signal.aborted) {
          this.options.log.warn("the notifications' watch ended; watching again", {
            error: err instanceof Error ? err.message : String(err),
          });
        }
      } finally {
        this.watching = false;
      }
      if (watchAbort.signal.aborted) continue;
      await sleep(backoff, undefined, { signal }).catch(() => undefined);
      backoff = Math.min(backoff * 2, REWATCH_MAX_MS);
    }
  }

  private onWatchEvent(event: WatchSessionsResponse): void {
    switch (event.type) {
      case WatchEventType.SNAPSHOT:
      case WatchEventType.UPSERTED:
      case WatchEventType.UNREACHABLE_CHANGED: {
        const news = event.sessions.map(notificationOf).filter((e) => e !== undefined && !this.seen(e));
        const recordOnly = this.baseline && event.type === WatchEventType.SNAPSHOT;
        if (event.type === WatchEventType.SNAPSHOT) this.baseline = false;
        if (news.length === 0 && !recordOnly) return;
        for (const e of news) if (e) this.remember(e);
        void this.options.files.notified.write(this.notified).catch((err: unknown) => {
          this.options.log.warn("cannot record what was notified", { error: String(err) });
        });
        if (recordOnly) return;
        for (const e of news) if (e) this.track(this.dispatch(e, this.supersede(e.session)));
        return;
      }
      default:
        return;
    }
  }

  private seen(e: NotificationEvent): boolean {
    return this.notified[e.session]?.keys.includes(e.key) ?? false;
  }

  private remember(e: NotificationEvent): void {
    const entry = this.notified[e.session] ?? { keys: [], time: 0 };
    this.notified[e.session] = { keys: [...entry.keys, e.key].slice(-KEYS_PER_SESSION), time: Date.now() };
    const names = Object.keys(this.notified);
    if (names.length <= MAX_NOTIFIED_SESSIONS) return;
    names.sort((a, b) => (this.notified[a]?.time ?? 0) - (this.notified[b]?.time ?? 0));
    for (const name of names.slice(0, names.length - MAX_NOTIFIED_SESSIONS)) delete this.notified[name];
  }

  /**
   * Makes a session's new notification its newest: the deliveries of the one before it end now
   * (logged SUPERSEDED), to every target. Answers the signal that ends this one's in turn.
   */
  private supersede(session: string): AbortSignal {
    this.newest.get(session)?.abort();
    this.newest.delete(session);
    const current = new AbortController();
    this.newest.set(session, current);
    if (this.newest.size > MAX_NOTIFIED_SESSIONS) {
      // The session notified longest ago: its deliveries have long ended.
      const oldest = this.newest.keys().next().value;
      if (oldest !== undefined) this.newest.delete(oldest);
    }
    return current.signal;
  }

  /** Sends one notification to every target that takes it, unless a newer one of its session came. */
  private async dispatch(first: NotificationEvent, superseded: AbortSignal): Promise<void> {
    let event = first;
    if (event.kind === "prompt" && event.detailed === false) {
      await sleep(PROMPT_DETAIL_WAIT_MS, undefined, {
        signal: AbortSignal.any([this.abort.signal, superseded]),
      }).catch(() => undefined);
      if (superseded.aborted || this.abort.signal.aborted) return;
    }
    if (event.kind === "turn-finished" && this.options.reply) {
      const reply = await this.options
        .reply(event.session, AbortSignal.any([this.abort.signal, AbortSignal.timeout(REPLY_WAIT_MS)]))
        .catch(() => undefined);
      event = { ...event, summary: turnSummary(reply) };
    }
    const [subscriptions, hooks] = await Promise.all([
      this.options.files.subscriptions.read(),
      this.options.files.webhooks.read(),
    ]);
    // A newer notification of the session came while the reply or the targets were read: it goes instead.
    if (superseded.aborted) return;
    for (const subscription of subscriptions) {
      const target: Target = { type: "push", name: `pushSubscriptions/${subscription.id}`, subscription };
      if (this.viewedBy(target.name, event.session)) {
        this.log(target, event, 1, { status: 0, error: "" }, DeliveryOutcome.SUPPRESSED_VIEWING);
        continue;
      }
      this.track(this.deliver(target, event, superseded));
    }
    for (const hook of hooks) {
      if (!webhookTakes(hook, event)) continue;
      this.track(this.deliver({ type: "webhook", name: `webhooks/${hook.id}`, hook }, event, superseded));
    }
  }

  private viewedBy(subscription: string, session: string): boolean {
    const view = this.viewing.get(subscription);
    if (!view) return false;
    if (view.until < Date.now()) {
      this.viewing.delete(subscription);
      return false;
    }
    return view.session === session;
  }

  /**
   * Delivers to one target, retrying with backoff while the failure is one worth retrying. When a
   * newer notification of the session comes (`superseded`), its retry or its request under way ends:
   * logged SUPERSEDED, never sent again.
   */
  private async deliver(target: Target, event: NotificationEvent, superseded: AbortSignal): Promise<void> {
    const signal = AbortSignal.any([this.abort.signal, superseded]);
    let wait = this.timing.retryInitialMs;
    for (let attempt = 1; !this.abort.signal.aborted; attempt++) {
      if (superseded.aborted) {
        this.log(target, event, attempt, { status: 0, error: SUPERSEDED_ERROR }, DeliveryOutcome.SUPERSEDED);
        return;
      }
      const { delivery, retryAfterSeconds } = await this.attempt(target, event, attempt, false, signal);
      if (delivery.outcome !== DeliveryOutcome.RETRYING) return;
      const asked = retryAfterSeconds * 1000;
      await sleep(Math.min(Math.max(wait, asked), this.timing.retryMaxMs), undefined, { signal }).catch(
        () => undefined,
      );
      wait = Math.min(wait * 2, this.timing.retryMaxMs);
    }
  }

  /** One attempt; logs and answers its delivery. A gone subscription is removed. */
  private async attempt(
    target: Target,
    event: NotificationEvent,
    attempt: number,
    once: boolean,
    signal: AbortSignal,
  ): Promise<{ delivery: Delivery; retryAfterSeconds: number }> {
    let result =
      target.type === "push"
        ? await sendPush(target.subscription, event, this.options.keys, this.options.vapidSubject, signal)
        : await this.sendWebhook(target.hook, event, signal);
    let outcome: DeliveryOutcome;
    if (result.error !== "" && signal.aborted && !this.abort.signal.aborted) {
      // Ended by a newer notification of the session to this target, not by the receiver.
      outcome = DeliveryOutcome.SUPERSEDED;
      result = { status: 0, error: SUPERSEDED_ERROR };
    } else if (result.error === "") outcome = DeliveryOutcome.DELIVERED;
    else if (target.type === "push" && (result.status === 404 || result.status === 410)) {
      outcome = DeliveryOutcome.SUBSCRIPTION_GONE;
      await this.removeSubscription(target.subscription.id);
    } else if (!once && retryable(result.status) && attempt < this.timing.maxAttempts) {
      outcome = DeliveryOutcome.RETRYING;
    } else outcome = DeliveryOutcome.FAILED;
    if (outcome === DeliveryOutcome.DELIVERED && target.type === "push") {
      await this.options.files.subscriptions
        .update((all) => all.map((s) => (s.id === target.subscription.id ? { ...s, lastDeliveryTime: Date.now() } : s)))
        .catch(() => undefined);
    }
    return {
      delivery: this.log(target, event, attempt, result, outcome),
      retryAfterSeconds: result.retryAfterSeconds ?? 0,
    };
  }

  private sendWebhook(hook: StoredWebhook, event: NotificationEvent, signal: AbortSignal): Promise<SendResult> {
    const base = this.options.dashboardUrl().replace(/\/+$/, "");
    const request = webhookRequest(hook, event, `${base}${event.path}`);
    return sendRequest(request.url, { ...request, signal });
  }

  private async removeSubscription(id: string): Promise<void> {
    await this.options.files.subscriptions.update((all) => all.filter((s) => s.id !== id)).catch(() => undefined);
    this.viewing.delete(`pushSubscriptions/${id}`);
    this.options.log.info("push subscription gone; removed", { subscription: id });
    void this.targetsChanged();
  }

  private log(
    target: Target,
    event: NotificationEvent,
    attempt: number,
    result: SendResult,
    outcome: DeliveryOutcome,
  ): Delivery {
    const delivery = create(DeliverySchema, {
      target: target.name,
      session: event.session,
      kind: KIND_OF[event.kind],
      summary: event.summary,
      outcome,
      httpStatus: result.status,
      error: result.error,
      attempt,
      time: timestampFromMs(Date.now()),
    });
    this.options.deliveries.add(delivery);
    if (
      outcome !== DeliveryOutcome.DELIVERED &&
      outcome !== DeliveryOutcome.SUPPRESSED_VIEWING &&
      outcome !== DeliveryOutcome.SUPERSEDED
    ) {
      // Never the URL or endpoint: both can be secrets.
      this.options.log.info("notification not delivered", {
        target: target.name,
        outcome: DeliveryOutcome[outcome],
        attempt,
        error: result.error,
      });
    }
    this.onDelivery?.(delivery);
    return delivery;
  }

  private track(work: Promise<void>): void {
    const tracked = work.catch((err: unknown) => {
      this.options.log.warn("notification delivery failed", {
        error: err instanceof Error ? err.message : String(err),
      });
    });
    this.inFlight.add(tracked);
    void tracked.finally(() => this.inFlight.delete(tracked));
  }
}

/** The delivery log's reason for a notification dropped because a newer one of its session came. */
export const SUPERSEDED_ERROR = "a newer notification of this session was sent instead";

/** The proto kind of an event's kind. */
const KIND_OF = {
  prompt: NotificationKind.PROMPT,
  "turn-finished": NotificationKind.TURN_FINISHED,
  test: NotificationKind.TEST,
} as const;

/** Whether a webhook's filters (node, session name glob, kinds) take `event`. */
export function webhookTakes(hook: StoredWebhook, event: NotificationEvent): boolean {
  if (event.kind === "test") return true;
  if (hook.nodeFilter !== "" && hook.nodeFilter !== event.node) return false;
  if (hook.sessionPattern !== "" && !globMatches(hook.sessionPattern, event.sessionName)) return false;
  return hook.kinds.length === 0 || hook.kinds.includes(event.kind);
}

/** A glob of `*` (any run) and `?` (one character), the whole name matched. */
export function globMatches(pattern: string, name: string): boolean {
  const source = [...pattern]
    .map((c) => (c === "*" ? ".*" : c === "?" ? "." : c.replace(/[\\^$.|+()[\]{}]/g, "\\$&")))
    .join("");
  return new RegExp(`^${source}$`, "s").test(name);
}
