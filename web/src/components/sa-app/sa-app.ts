import { ContextProvider } from "@lit/context";
import { html } from "lit";
import { describeError } from "../../api/errors.js";
import { createHubClient, hubContext } from "../../api/hub-client.js";
import { setLoginKey } from "../../api/login-key.js";
import { ListenersController } from "../../controllers/listeners.js";
import { MediaQueryController } from "../../controllers/media-query.js";
import { PageLifecycleController } from "../../controllers/page-lifecycle.js";
import { PushDeviceController } from "../../controllers/push-device.js";
import { ShortcutsController } from "../../controllers/shortcuts.js";
import { VisualViewportController } from "../../controllers/visual-viewport.js";
import { type AppServices, appContext } from "../../state/app-context.js";
import { HubStreams } from "../../state/hub-streams.js";
import { ListTiming } from "../../state/list-timing.js";
import { NodeStore } from "../../state/node-store.js";
import { browserStorage, PreferencesStore } from "../../state/preferences.js";
import { guessDeviceName } from "../../state/push-device.js";
import { ReviewAlerts, registerWorker } from "../../state/review-alerts.js";
import { Router } from "../../state/router.js";
import { SessionStore } from "../../state/session-store.js";
import { StoreController } from "../../state/store-controller.js";
import { WakeWatcher } from "../../state/wake-watcher.js";
import { LightElement } from "../base/light-element.js";
import type { SaEvent, SaEventDetails } from "../events.js";
import { loadViewsFor, viewElement, warmLaterViews } from "../lazy-views.js";
import type { SaToasts } from "../sa-toasts/sa-toasts.js";
import { renderPanes, renderTopBar, routedClick } from "./app-layout.js";
import { renderAppMenu, testNotification, toggleNotifications } from "./app-menu.js";

/**
 * A tab hidden this long closes its nodes stream and lets its terminal detach: browsers allow six
 * connections per host over HTTP/1.1, shared by all tabs, and a background tab should not hold them.
 */
const HIDDEN_RELEASE_MS = 60_000;
/** The dialog element each `sa-open-dialog` opens. */
const DIALOGS = { create: "sa-create-dialog", adopt: "sa-adopt-dialog", webhooks: "sa-webhooks-dialog" } as const;
/**
 * The dashboard's shell: it owns the page's stores (router, preferences, the hub streams, sessions and
 * nodes), provides them to every view through a context, and lays out the top bar, the list and the
 * session beside it, the login gate, and the dialogs. Keys: `/` searches, `n` opens New session.
 */
export class SaApp extends LightElement {
  private readonly hub = createHubClient();
  private readonly sessions = new SessionStore();
  private readonly nodes = new NodeStore();
  private readonly router = new Router();
  private readonly systemDark = new MediaQueryController(this, "(prefers-color-scheme: dark)", () =>
    this.preferences.systemThemeChanged(),
  );
  private readonly preferences = new PreferencesStore(browserStorage(), () => this.systemDark.matches);
  private readonly streams = new HubStreams({
    hub: this.hub,
    sessions: this.sessions,
    nodes: this.nodes,
    isVisible: () => document.visibilityState === "visible",
    onSessionsApplied: (event, start) => this.timing.applied(event.sessions.length + event.removedNames.length, start),
    onLoggedOut: () => {
      if (this.router.route.page !== "login")
        this.router.replace(`/login?next=${encodeURIComponent(this.router.here)}`);
    },
  });
  private readonly wakeListeners = new Set<() => void>();
  private readonly wake = new WakeWatcher(() => this.onWake());
  private readonly alerts: ReviewAlerts;
  /** This device's Web Push subscription on the Hub, and the Hub told which session this page shows. */
  private readonly push = new PushDeviceController(this, {
    client: this.hub.notifications,
    storage: browserStorage(),
    viewedSession: () => this.router.viewedSession,
    subscribeRoute: (listener) => this.router.subscribe(listener),
    visible: () => document.visibilityState === "visible",
    toast: (message, tone) => this.toast(message, tone),
  });
  private readonly timing = new ListTiming(this, {
    list: () => this.querySelector("sa-session-list"),
    // Warm the session view's and the terminal's code while the person reads the list.
    firstListShown: warmLaterViews,
  });

  /** Milliseconds from receiving a WatchSessions event to the list showing it (newest last). */
  get applySamples(): readonly number[] {
    return this.timing.samples;
  }

  private readonly services: AppServices = {
    hub: this.hub,
    sessions: this.sessions,
    nodes: this.nodes,
    preferences: this.preferences,
    navigate: (path, options) => this.router.navigate(path, options),
    toast: (message, tone) => this.toast(message, tone),
    hubState: () => this.streams.state,
    subscribeWake: (listener) => {
      this.wakeListeners.add(listener);
      return () => this.wakeListeners.delete(listener);
    },
  };

  constructor() {
    super();
    new ContextProvider(this, { context: hubContext, initialValue: this.hub });
    new ContextProvider(this, { context: appContext, initialValue: this.services });
    new StoreController(this, () => [this.router, this.preferences, this.streams]);
    new VisualViewportController(this);
    new ListenersController(this, () => [
      [window, "popstate", () => this.router.sync()],
      [document, "click", (e) => this.onDocumentClick(e)],
      [this, "sa-open-dialog", (e) => this.openDialog((e as SaEvent<"sa-open-dialog">).detail)],
      [
        this,
        "sa-stop-session",
        (e) =>
          void viewElement(this, "sa-stop-dialog", this.services.toast).then((d) =>
            d?.open((e as SaEvent<"sa-stop-session">).detail),
          ),
      ],
    ]);
    new ShortcutsController(this, {
      route: () => this.router.route,
      loggedIn: () => this.streams.auth === "in",
      run: (shortcut) => (shortcut === "search" ? this.focusSearch() : this.openDialog("create")),
    });
    new PageLifecycleController(this, {
      hiddenReleaseMs: HIDDEN_RELEASE_MS,
      onHiddenLong: () => this.streams.hiddenLong(),
      onVisible: () => this.streams.visible(),
      // Closed streams keep the page eligible for the back/forward cache; pageshow reopens them.
      onPageHide: () => this.streams.stop(),
      onPageRestore: () => {
        if (this.streams.auth !== "out") this.streams.start();
      },
    });
    this.preferences.subscribe(() => this.applyTheme());
    this.alerts = new ReviewAlerts({
      store: this.sessions,
      viewedSession: () => this.router.viewedSession,
      notificationsEnabled: () => this.preferences.value.notify,
      open: (path) => this.router.navigate(path),
    });
  }

  /** Notifications raised by this page so far. */
  get notificationsRaised(): number {
    return this.alerts.raised;
  }

  /** Resolves once every notification this page has shown or closed so far has been (tests). */
  notificationsSettled(): Promise<void> {
    return this.alerts.settled();
  }

  /** How the newest notification went ("worker", "page", or why it failed), for troubleshooting. */
  get lastNotificationOutcome(): string {
    return this.alerts.lastOutcome;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    this.applyTheme();
    this.alerts.start();
    this.wake.start();
    if (this.preferences.value.notify) void registerWorker();
    if (this.router.route.page === "login") this.streams.loggedOut();
    else this.streams.start();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.streams.stop();
    this.wake.stop();
    this.alerts.stop();
  }

  protected override render() {
    const route = this.router.route;
    loadViewsFor(route, this.services.toast);
    if (route.page === "login" || this.streams.auth === "out") {
      const next = route.page === "login" ? route.next : this.router.here;
      return html`<sa-login .next=${next} @sa-logged-in=${(e: SaEvent<"sa-logged-in">) => this.onLoggedIn(e.detail)}></sa-login>
        <sa-toasts></sa-toasts>`;
    }
    const review = this.sessions.reviewCount();
    const notifications = {
      preferences: this.preferences,
      alerts: this.alerts,
      toast: this.services.toast,
      turnedOff: () => this.push.unsubscribe(),
    };
    const menu = renderAppMenu({
      prefs: this.preferences.value,
      notifySupported: typeof Notification !== "undefined",
      setPrefs: (partial) => this.preferences.update(partial),
      toggleNotifications: (on) => void toggleNotifications(on, notifications),
      testNotification: () => void testNotification(notifications),
      pushDevice: this.push.device,
      togglePush: (on) =>
        void (on ? this.push.subscribe(guessDeviceName(navigator.userAgent)) : this.push.unsubscribe()),
      renameDevice: (name) => void this.push.subscribe(name),
      openAdopt: () => this.openDialog("adopt"),
      openWebhooks: () => this.openDialog("webhooks"),
      logout: () => void this.logout(),
    });
    return html`
      ${renderTopBar(
        route,
        review,
        menu,
        () => this.openDialog("create"),
        () => this.openDialog("adopt"),
      )}
      <sa-banner .hubState=${this.streams.state} @sa-retry=${() => this.onWake()}></sa-banner>
      <main id="main" tabindex="-1">
        ${renderPanes(route, {
          filter: this.router.filter,
          loading: !this.sessions.loaded,
          openedFrom: this.router.focusAtChange,
          setFilter: (f) => this.router.setFilter(f),
          rendered: () => this.timing.listRendered(this.sessions.loaded),
        })}
      </main>
      <sa-create-dialog></sa-create-dialog>
      <sa-adopt-dialog></sa-adopt-dialog>
      <sa-webhooks-dialog></sa-webhooks-dialog>
      <sa-stop-dialog></sa-stop-dialog>
      <sa-toasts></sa-toasts>
    `;
  }

  private onLoggedIn(next: string): void {
    this.router.navigate(next, { replace: true });
    this.streams.loggingIn();
  }

  private async logout(): Promise<void> {
    this.closeMenu();
    try {
      await fetch("/logout", { method: "POST", credentials: "same-origin" });
      setLoginKey("");
    } catch (err) {
      this.toast(describeError(err), "error");
      return;
    }
    this.streams.loggedOut();
    this.router.replace("/login");
  }

  /** Puts the focus in the list's search box; false when no list shows one. */
  private focusSearch(): boolean {
    const search = this.querySelector<HTMLInputElement>("sa-session-list input[type=search]");
    search?.focus();
    search?.select();
    return search !== null;
  }

  /**
   * Closes the menu on a click elsewhere, and routes plain clicks on the app's own links (`data-route`)
   * without reloading the page (modified clicks still open new tabs).
   */
  private onDocumentClick(e: Event): void {
    const menu = this.querySelector<HTMLDetailsElement>("details.menu");
    if (menu?.open && !menu.contains(e.target as Node)) menu.open = false;
    const path = routedClick(e, this);
    if (path !== undefined) {
      e.preventDefault();
      this.router.navigate(path);
    }
  }

  private closeMenu(): void {
    const menu = this.querySelector<HTMLDetailsElement>("details.menu");
    if (menu) menu.open = false;
  }

  /** Opens a dialog (New session, Adopt, Webhooks); true, so a shortcut that opened it takes its key. */
  private openDialog(which: SaEventDetails["sa-open-dialog"]): true {
    this.closeMenu();
    void viewElement(this, DIALOGS[which], this.services.toast).then((dialog) => dialog?.open());
    return true;
  }

  private applyTheme(): void {
    document.documentElement.dataset.theme = this.preferences.theme;
  }

  private onWake(): void {
    if (this.streams.auth === "out") return;
    this.streams.wake();
    for (const l of this.wakeListeners) l();
  }

  private toast(message: string, tone: "info" | "error" = "info"): void {
    (this.querySelector("sa-toasts") as SaToasts | null)?.show(message, tone);
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "sa-app": SaApp;
  }
}
