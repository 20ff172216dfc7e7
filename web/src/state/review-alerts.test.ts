import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type Session, SessionSchema, SessionStatus, StatusReason } from "../../../gen/staragent/v1/session_pb.js";
import { WatchEventType, WatchSessionsResponseSchema } from "../../../gen/staragent/v1/session_service_pb.js";
import { BASE_TITLE, faviconUrl, ReviewAlerts } from "./review-alerts.js";
import { SessionStore } from "./session-store.js";

/** Page notifications as the test browser shows them (permission granted, no service worker). */
class FakeNotification {
  static permission: NotificationPermission = "granted";
  static shown: FakeNotification[] = [];
  onclick: (() => void) | null = null;
  closed = false;
  constructor(
    readonly title: string,
    readonly options: NotificationOptions,
  ) {
    FakeNotification.shown.push(this);
  }
  close(): void {
    this.closed = true;
  }
}

function session(id: string, status: SessionStatus, extra: MessageInitShape<typeof SessionSchema> = {}): Session {
  return create(SessionSchema, {
    name: `nodes/local/sessions/${id}`,
    node: "local",
    tmuxSession: id,
    cwd: "/work/demo",
    status,
    ...extra,
  });
}

function event(type: WatchEventType, sessions: Session[]) {
  return create(WatchSessionsResponseSchema, { type, sessions });
}

describe("ReviewAlerts", () => {
  let page: { title: string; visibilityState: string; focused: boolean; icon: { href: string } };
  let alerts: ReviewAlerts | undefined;

  beforeEach(() => {
    vi.useFakeTimers();
    FakeNotification.shown = [];
    FakeNotification.permission = "granted";
    page = { title: "", visibilityState: "visible", focused: false, icon: { href: "" } };
    vi.stubGlobal("Notification", FakeNotification);
    vi.stubGlobal("navigator", {});
    vi.stubGlobal("window", { focus: () => {} });
    vi.stubGlobal("document", {
      get title() {
        return page.title;
      },
      set title(t: string) {
        page.title = t;
      },
      get visibilityState() {
        return page.visibilityState;
      },
      hasFocus: () => page.focused,
      querySelector: () => page.icon,
    });
  });

  afterEach(() => {
    alerts?.stop();
    alerts = undefined;
    vi.unstubAllGlobals();
    vi.useRealTimers();
  });

  function start(options: { viewed?: string; enabled?: boolean } = {}) {
    const store = new SessionStore();
    const opened: string[] = [];
    alerts = new ReviewAlerts({
      store,
      viewedSession: () => options.viewed,
      notificationsEnabled: () => options.enabled ?? true,
      open: (path) => opened.push(path),
      idleNotifyAfterMs: 10_000,
    });
    alerts.start();
    return { store, opened };
  }

  /** Lets the notification work (one promise chain) run. */
  async function settle(): Promise<void> {
    await vi.advanceTimersByTimeAsync(0);
  }

  it("keeps the review count in the title and the favicon", () => {
    const { store } = start();
    expect(page.title).toBe(BASE_TITLE);
    store.apply(
      event(WatchEventType.SNAPSHOT, [session("a", SessionStatus.REVIEW), session("b", SessionStatus.REVIEW)]),
    );
    expect(page.title).toBe(`(2) ${BASE_TITLE} · 2 in review`);
    expect(page.icon.href).toBe(faviconUrl(2));
    store.apply(event(WatchEventType.UPSERTED, [session("a", SessionStatus.IDLE)]));
    expect(page.title).toBe(`(1) ${BASE_TITLE} · 1 in review`);
  });

  it("notifies when a session enters review, saying what it asks, and opens it on a click", async () => {
    const { store, opened } = start();
    store.apply(event(WatchEventType.SNAPSHOT, [session("a", SessionStatus.WORKING)]));
    store.apply(
      event(WatchEventType.UPSERTED, [
        session("a", SessionStatus.REVIEW, { statusReason: StatusReason.INPUT_PROMPT, prompt: "Run npm test?" }),
      ]),
    );
    await settle();
    expect(FakeNotification.shown.map((n) => n.title)).toEqual(["a on local needs your input"]);
    const n = FakeNotification.shown[0];
    expect(n?.options.body).toContain("Run npm test?");
    expect(n?.options.tag).toBe("review:nodes/local/sessions/a");
    n?.onclick?.();
    expect(opened).toEqual(["/sessions/local/a"]);
    expect(n?.closed).toBe(true);
    expect(alerts?.raised).toBe(1);
  });

  it("says nothing for the snapshot, when notifications are off, or without the browser's permission", async () => {
    const off = start({ enabled: false });
    off.store.apply(event(WatchEventType.SNAPSHOT, [session("a", SessionStatus.REVIEW)]));
    off.store.apply(event(WatchEventType.UPSERTED, [session("b", SessionStatus.REVIEW)]));
    await settle();
    expect(FakeNotification.shown).toEqual([]);
    alerts?.stop();
    FakeNotification.permission = "denied";
    const denied = start();
    denied.store.apply(event(WatchEventType.SNAPSHOT, []));
    denied.store.apply(event(WatchEventType.UPSERTED, [session("c", SessionStatus.REVIEW)]));
    await settle();
    expect(FakeNotification.shown).toEqual([]);
  });

  it("holds back the session on screen while the person looks, not while the page is in the background", async () => {
    const { store } = start({ viewed: "nodes/local/sessions/a" });
    store.apply(event(WatchEventType.SNAPSHOT, [session("a", SessionStatus.WORKING)]));
    page.focused = true;
    store.apply(event(WatchEventType.UPSERTED, [session("a", SessionStatus.REVIEW)]));
    await settle();
    expect(FakeNotification.shown).toEqual([]);
    store.apply(event(WatchEventType.UPSERTED, [session("a", SessionStatus.WORKING)]));
    page.focused = false;
    store.apply(event(WatchEventType.UPSERTED, [session("a", SessionStatus.REVIEW)]));
    await settle();
    expect(FakeNotification.shown).toHaveLength(1);
  });

  it("notifies a new finished turn while already in review (a new completion id)", async () => {
    const { store } = start();
    const done = (id: string) =>
      session("a", SessionStatus.REVIEW, { statusReason: StatusReason.UNSEEN_COMPLETION, completionId: id });
    store.apply(event(WatchEventType.SNAPSHOT, [done("1")]));
    store.apply(event(WatchEventType.UPSERTED, [done("1")]));
    await settle();
    expect(FakeNotification.shown).toEqual([]);
    store.apply(event(WatchEventType.UPSERTED, [done("2")]));
    await settle();
    expect(FakeNotification.shown.map((n) => n.title)).toEqual(["a finished its turn"]);
  });

  it("notifies going idle only after working at least the idle threshold", async () => {
    const { store } = start();
    store.apply(event(WatchEventType.SNAPSHOT, [session("s", SessionStatus.IDLE)]));
    store.apply(event(WatchEventType.UPSERTED, [session("s", SessionStatus.WORKING)]));
    vi.advanceTimersByTime(9_000);
    store.apply(event(WatchEventType.UPSERTED, [session("s", SessionStatus.IDLE)]));
    await settle();
    expect(FakeNotification.shown).toEqual([]);
    store.apply(event(WatchEventType.UPSERTED, [session("s", SessionStatus.WORKING)]));
    vi.advanceTimersByTime(10_000);
    store.apply(event(WatchEventType.UPSERTED, [session("s", SessionStatus.IDLE)]));
    await settle();
    expect(FakeNotification.shown.map((n) => n.title)).toEqual(["s is idle"]);
  });

  it("does not call an interrupt going idle news", async () => {
    const { store } = start();
    store.apply(event(WatchEventType.SNAPSHOT, [session("s", SessionStatus.WORKING)]));
    vi.advanceTimersByTime(60_000);
    store.apply(event(WatchEventType.UPSERTED, [session("s", SessionStatus.WORKING)]));
    vi.advanceTimersByTime(60_000);
    store.apply(
      event(WatchEventType.UPSERTED, [session("s", SessionStatus.IDLE, { statusReason: StatusReason.INTERRUPTED })]),
    );
    await settle();
    expect(FakeNotification.shown).toEqual([]);
  });

  it("never lists notifications while one is being shown, whichever sessions they belong to", async () => {
    // Chromium drops a notification from getNotifications() for good when it is listed mid-show.
    let showing = 0;
    let release: (() => void) | undefined;
    const listed: Array<{ tag: string | undefined; showing: number }> = [];
    const registration = {
      active: {},
      showNotification: () => {
        showing++;
        return new Promise<void>((resolve) => {
          release = () => {
            showing--;
            resolve();
          };
        });
      },
      getNotifications: async (filter?: { tag?: string }) => {
        listed.push({ tag: filter?.tag, showing });
        return [];
      },
    };
    vi.stubGlobal("navigator", {
      serviceWorker: {
        getRegistration: async () => registration,
        addEventListener: () => {},
        removeEventListener: () => {},
      },
    });
    const { store } = start();
    store.apply(
      event(WatchEventType.SNAPSHOT, [session("a", SessionStatus.WORKING), session("b", SessionStatus.REVIEW)]),
    );
    store.apply(event(WatchEventType.UPSERTED, [session("a", SessionStatus.REVIEW)]));
    store.apply(event(WatchEventType.UPSERTED, [session("b", SessionStatus.IDLE)]));
    await settle();
    expect(showing).toBe(1);
    expect(listed).toEqual([]);
    release?.();
    await settle();
    await alerts?.settled();
    expect(listed).toEqual([{ tag: "review:nodes/local/sessions/b", showing: 0 }]);
  });
});
