import { ContextProvider } from "@lit/context";
import { html, nothing, type PropertyValues } from "lit";
import { state } from "lit/decorators.js";
import type { WatchNodesResponse } from "../../../../gen/staragent/v1/node_service_pb.js";
import type { Session } from "../../../../gen/staragent/v1/session_pb.js";
import type { WatchSessionsResponse } from "../../../../gen/staragent/v1/session_service_pb.js";
import { describeError, isUnauthenticated } from "../../api/errors.js";
import { createHubClient, hubContext } from "../../api/hub-client.js";
import { type AppServices, appContext } from "../../state/app-context.js";
import { NodeStore } from "../../state/node-store.js";
import { effectiveTheme, loadPreferences, type Preferences, savePreferences } from "../../state/preferences.js";
import { ReviewAlerts, registerWorker } from "../../state/review-alerts.js";
import { parseRoute, type Route, sessionName } from "../../state/routes.js";
import { filterSearch, parseFilter, type SessionFilter } from "../../state/session-filter.js";
import { SessionStore } from "../../state/session-store.js";
import { type StreamState, StreamSupervisor } from "../../state/stream-supervisor.js";
import { WakeWatcher } from "../../state/wake-watcher.js";
import { LightElement } from "../base/light-element.js";
import type { SaToasts } from "../sa-toasts/sa-toasts.js";

/**
 * Silence on WatchSessions after which it is treated as dead: nodes send a heartbeat after 15 s without
 * changes, so 35 s allows one missed heartbeat and a slow network.
 */
const SESSIONS_LIVENESS_MS = 35_000;
/**
 * WatchNodes sends only changes (no heartbeats), so it has no watchdog of its own: it is reopened with
 * the sessions stream and on wake. This value only disables the watchdog.
 */
const NODES_LIVENESS_MS = 2 ** 31 - 1;
/**
 * A tab hidden this long closes its nodes stream and lets its terminal detach: browsers allow six
 * connections per host over HTTP/1.1, shared by all tabs, and a background tab should not hold them.
 */
const HIDDEN_RELEASE_MS = 60_000;
/** Timing samples of applying a WatchSessions event kept for the benchmark and for troubleshooting. */
const MAX_APPLY_SAMPLES = 200;

/** Whether the Hub accepted this browser's login. */
type AuthState = "checking" | "in" | "out";

/**
 * The dashboard: routes, the login gate, the one WatchSessions stream of this tab (and WatchNodes), the
 * review count in the title and favicon, notifications, theme, and the layout from the visual viewport.
 */
export class SaApp extends LightElement {
  @state() private route: Route = parseRoute(location.pathname, location.search);
  @state() private auth: AuthState = "checking";
  @state() private hubStream: StreamState = { kind: "connecting", attempt: 0 };
  @state() private prefs: Preferences = loadPreferences();
  @state() private filter: SessionFilter = parseFilter(location.search);

  private readonly hub = createHubClient();
  private readonly sessions = new SessionStore();
  private readonly nodes = new NodeStore();
  private readonly wakeListeners = new Set<() => void>();
  private readonly wake = new WakeWatcher(() => this.onWake());
  private readonly alerts: ReviewAlerts;
  private hiddenTimer: ReturnType<typeof setTimeout> | undefined;
  private firstListMarked = false;
  private readonly cleanups: Array<() => void> = [];

  /** Milliseconds from receiving a WatchSessions event to the list showing it (newest last). */
  readonly applySamples: number[] = [];

  private readonly sessionStream = new StreamSupervisor<WatchSessionsResponse>({
    open: (signal) => this.hub.sessions.watchSessions({ parent: "nodes/-" }, { signal }),
    onMessage: (event) => {
      const start = performance.now();
      this.sessions.apply(event);
      if (event.sessions.length + event.removedNames.length > 0 || !this.firstListMarked) this.timeApply(start);
      return undefined;
    },
    onState: (s) => this.onSessionStreamState(s),
    isFatal: isUnauthenticated,
    livenessMs: SESSIONS_LIVENESS_MS,
  });

  private readonly nodeStream = new StreamSupervisor<WatchNodesResponse>({
    open: (signal) => this.hub.nodes.watchNodes({}, { signal }),
    onMessage: (event) => {
      this.nodes.set(event.nodes);
      return undefined;
    },
    isFatal: isUnauthenticated,
    livenessMs: NODES_LIVENESS_MS,
  });

  private readonly services: AppServices = {
    hub: this.hub,
    sessions: this.sessions,
    nodes: this.nodes,
    navigate: (path, options) => this.navigate(path, options),
    toast: (message, tone) => this.toast(message, tone),
    hubState: () => this.hubStream,
    preferences: () => this.prefs,
    subscribeWake: (listener) => {
      this.wakeListeners.add(listener);
      return () => this.wakeListeners.delete(listener);
    },
  };

  constructor() {
    super();
    new ContextProvider(this, { context: hubContext, initialValue: this.hub });
    new ContextProvider(this, { context: appContext, initialValue: this.services });
    this.alerts = new ReviewAlerts({
      store: this.sessions,
      viewedSession: () => this.viewedSessionName(),
      notificationsEnabled: () => this.prefs.notify,
      open: (path) => this.navigate(path),
    });
  }

  /** Notifications raised by this page so far. */
  get notificationsRaised(): number {
    return this.alerts.raised;
  }

  /** How the newest notification went ("worker", "page", or why it failed), for troubleshooting. */
  get lastNotificationOutcome(): string {
    return this.alerts.lastOutcome;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    this.applyTheme();
    this.listen(window, "popstate", () => this.syncFromLocation());
    this.listen(document, "visibilitychange", () => this.onVisibility());
    this.listen(document, "keydown", (e) => this.onGlobalKey(e as KeyboardEvent));
    this.listen(document, "click", (e) => this.onDocumentClick(e));
    this.listen(this, "sa-open-dialog", (e) =>
      this.openDialog((e as CustomEvent<string>).detail === "adopt" ? "sa-adopt-dialog" : "sa-create-dialog"),
    );
    this.listen(this, "sa-stop-session", (e) =>
      this.querySelector("sa-stop-dialog")?.open((e as CustomEvent<Session>).detail),
    );
    this.listen(window, "pagehide", () => {
      // Closed streams keep the page eligible for the back/forward cache; pageshow reopens them.
      this.sessionStream.stop();
      this.nodeStream.stop();
    });
    this.listen(window, "pageshow", (e) => {
      if ((e as PageTransitionEvent).persisted && this.auth !== "out") this.startStreams();
    });
    const scheme = matchMedia("(prefers-color-scheme: dark)");
    const onScheme = () => this.applyTheme();
    scheme.addEventListener("change", onScheme);
    this.cleanups.push(() => scheme.removeEventListener("change", onScheme));
    this.watchViewport();
    this.alerts.start();
    this.wake.start();
    if (this.prefs.notify) void registerWorker();
    if (this.route.page === "login") this.auth = "out";
    else this.startStreams();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.sessionStream.stop();
    this.nodeStream.stop();
    this.wake.stop();
    this.alerts.stop();
    for (const c of this.cleanups.splice(0)) c();
  }

  protected override updated(changed: PropertyValues): void {
    if (changed.has("prefs")) this.applyTheme();
  }

  protected override render() {
    if (this.route.page === "login" || this.auth === "out") {
      const next = this.route.page === "login" ? this.route.next : location.pathname + location.search;
      return html`<sa-login .next=${next} @sa-logged-in=${(e: CustomEvent<string>) => this.onLoggedIn(e.detail)}></sa-login>
        <sa-toasts></sa-toasts>`;
    }
    const route = this.route;
    const session = route.page === "sessions" ? route.session : undefined;
    const review = this.sessions.reviewCount();
    return html`
      <a class="skip-link" href="#main">Skip to content</a>
      <header class="topbar">
        <a class="brand" href="/" data-route aria-label="StarAgent: all sessions">
          <span class="brand-mark" aria-hidden="true">★</span><span class="brand-name">StarAgent</span>
        </a>
        ${
          review > 0
            ? html`<a class="review-pill" href="/?status=review" data-route
                ><span aria-hidden="true">◆</span> ${review} <span class="wide-only">in review</span
                ><span class="visually-hidden narrow-only">in review</span></a
              >`
            : nothing
        }
        <nav class="topnav" aria-label="Pages">
          <a href="/" data-route aria-current=${route.page === "sessions" ? "page" : "false"}>Sessions</a>
          <a href="/nodes" data-route aria-current=${route.page === "nodes" ? "page" : "false"}>Nodes</a>
        </nav>
        <span class="spacer"></span>
        <button class="primary" @click=${() => this.openDialog("sa-create-dialog")} title="New session (n)">
          <span aria-hidden="true">+</span><span class="wide-only">New session</span
          ><span class="visually-hidden narrow-only">New session</span>
        </button>
        <button class="wide-only" @click=${() => this.openDialog("sa-adopt-dialog")}>Adopt</button>
        ${this.renderMenu()}
      </header>
      <sa-banner .hubState=${this.hubStream} @sa-retry=${() => this.onWake()}></sa-banner>
      <main id="main" tabindex="-1">
        ${
          route.page === "nodes"
            ? html`<sa-node-list></sa-node-list>`
            : html`<div class="panes ${session ? "has-session" : ""}">
                <section class="list-pane" aria-label="Sessions">
                  <sa-session-list
                    .filter=${this.filter}
                    .selected=${session ? sessionName(session.node, session.id) : ""}
                    .loading=${!this.sessions.loaded}
                    @sa-filter-change=${(e: CustomEvent<SessionFilter>) => this.setFilter(e.detail)}
                    @sa-rendered=${() => this.markFirstList()}
                  ></sa-session-list>
                </section>
                <section class="detail-pane" aria-label="Session">
                  ${
                    session && route.page === "sessions"
                      ? html`<sa-session-view .node=${session.node} .sessionId=${session.id} .tab=${route.tab}></sa-session-view>`
                      : html`<div class="empty-state detail-empty">
                          <h2>Pick a session</h2>
                          <p>Open a session on the left to see its terminal and chat. Sessions that need you are marked
                            <span class="status tone-review"><span class="glyph" aria-hidden="true">◆</span>review</span>.</p>
                          <p class="muted">Keys: <kbd>/</kbd> search, <kbd>↑</kbd> <kbd>↓</kbd> move, <kbd>Enter</kbd> open,
                            <kbd>n</kbd> new session.</p>
                        </div>`
                  }
                </section>
              </div>`
        }
      </main>
      <sa-create-dialog></sa-create-dialog>
      <sa-adopt-dialog></sa-adopt-dialog>
      <sa-stop-dialog></sa-stop-dialog>
      <sa-toasts></sa-toasts>
    `;
  }

  private renderMenu() {
    const p = this.prefs;
    const notifySupported = typeof Notification !== "undefined";
    return html`<details class="menu">
      <summary aria-label="Settings and more" title="Settings and more"><span aria-hidden="true">⋯</span></summary>
      <div class="menu-panel">
        <button class="narrow-only quiet" @click=${() => this.openDialog("sa-adopt-dialog")}>Adopt sessions…</button>
        <fieldset>
          <legend>Theme</legend>
          ${(["system", "light", "dark"] as const).map(
            (t) => html`<label class="radio"
              ><input type="radio" name="theme" .checked=${p.theme === t} @change=${() => this.setPrefs({ ...p, theme: t })} />
              ${t === "system" ? "Like the system" : t === "light" ? "Light" : "Dark"}</label
            >`,
          )}
        </fieldset>
        <label class="check"
          ><input
            type="checkbox"
            .checked=${p.notify}
            ?disabled=${!notifySupported}
            @change=${(e: Event) => this.toggleNotifications((e.target as HTMLInputElement).checked)}
          />
          Notify me when a session needs review, or goes idle after a long run</label
        >
        ${notifySupported ? nothing : html`<p class="muted small">This browser cannot show notifications here.</p>`}
        ${
          p.notify
            ? html`<button class="quiet" @click=${() => void this.testNotification()}>Send a test notification</button>`
            : nothing
        }
        <label class="check"
          ><input
            type="checkbox"
            .checked=${p.screenReader}
            @change=${(e: Event) => this.setPrefs({ ...p, screenReader: (e.target as HTMLInputElement).checked })}
          />
          Screen reader mode for terminals</label
        >
        <button class="quiet" @click=${() => this.logout()}>Log out</button>
      </div>
    </details>`;
  }

  /** The resource name of the session on screen. */
  private viewedSessionName(): string | undefined {
    const r = this.route;
    return r.page === "sessions" && r.session ? sessionName(r.session.node, r.session.id) : undefined;
  }

  private startStreams(): void {
    this.sessionStream.start();
    if (document.visibilityState === "visible") this.nodeStream.start();
  }

  private onSessionStreamState(s: StreamState): void {
    const wasDown =
      this.hubStream.kind === "waiting" || (this.hubStream.kind === "connecting" && this.hubStream.attempt > 0);
    this.hubStream = s;
    if (s.kind === "live") {
      if (this.auth !== "in") this.auth = "in";
      // The Hub is back: its node list may have changed meanwhile (WatchNodes has no heartbeat).
      if (wasDown && this.nodeStream.isRunning) this.nodeStream.reconnectNow();
      else if (!this.nodeStream.isRunning && document.visibilityState === "visible") this.nodeStream.start();
    }
    if (s.kind === "stopped" && s.error !== undefined && isUnauthenticated(s.error)) this.loggedOut();
  }

  private loggedOut(): void {
    this.sessionStream.stop();
    this.nodeStream.stop();
    this.sessions.clear();
    this.nodes.clear();
    this.auth = "out";
    if (this.route.page !== "login") {
      const next = location.pathname + location.search;
      history.replaceState(null, "", `/login?next=${encodeURIComponent(next)}`);
      this.route = parseRoute(location.pathname, location.search);
    }
  }

  private onLoggedIn(next: string): void {
    this.auth = "checking";
    this.navigate(next, { replace: true });
    this.startStreams();
  }

  private async logout(): Promise<void> {
    this.closeMenu();
    try {
      await fetch("/logout", { method: "POST", credentials: "same-origin" });
    } catch (err) {
      this.toast(describeError(err), "error");
      return;
    }
    this.loggedOut();
    history.replaceState(null, "", "/login");
    this.route = parseRoute("/login");
  }

  private navigate(path: string, options: { replace?: boolean } = {}): void {
    const url = new URL(path, location.origin);
    if (url.origin !== location.origin) return;
    let search = url.search;
    if (search === "" && url.pathname !== "/login") search = filterSearch(this.filter);
    const target = `${url.pathname}${search}`;
    if (target !== location.pathname + location.search) {
      if (options.replace) history.replaceState(null, "", target);
      else history.pushState(null, "", target);
    }
    this.syncFromLocation();
  }

  private syncFromLocation(): void {
    this.route = parseRoute(location.pathname, location.search);
    this.filter = parseFilter(location.search);
    if (this.route.page !== "login" && this.auth === "out") {
      // A page other than login while logged out: the login form asks, then comes back here.
      this.requestUpdate();
    }
  }

  private setFilter(filter: SessionFilter): void {
    this.filter = filter;
    history.replaceState(null, "", `${location.pathname}${filterSearch(filter)}`);
  }

  private onGlobalKey(e: KeyboardEvent): void {
    if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return;
    const target = e.target as HTMLElement | null;
    if (target?.closest("input, textarea, select, [contenteditable], .xterm, dialog")) return;
    if (e.key === "/") {
      const search = this.querySelector<HTMLInputElement>("sa-session-list input[type=search]");
      if (search) {
        e.preventDefault();
        search.focus();
        search.select();
      }
    } else if (e.key === "n" && this.auth === "in") {
      e.preventDefault();
      this.openDialog("sa-create-dialog");
    }
  }

  /**
   * Closes the menu on a click elsewhere, and routes plain clicks on the app's own links (`data-route`)
   * without reloading the page (modified clicks still open new tabs).
   */
  private onDocumentClick(e: Event): void {
    const menu = this.querySelector<HTMLDetailsElement>("details.menu");
    if (menu?.open && !menu.contains(e.target as Node)) menu.open = false;
    if (e instanceof MouseEvent && !e.defaultPrevented && e.button === 0 && !e.metaKey && !e.ctrlKey && !e.shiftKey) {
      const a = (e.target as HTMLElement | null)?.closest?.("a[data-route]") as HTMLAnchorElement | null;
      if (a && this.contains(a)) {
        e.preventDefault();
        const url = new URL(a.href);
        this.navigate(url.pathname + url.search);
      }
    }
  }

  private closeMenu(): void {
    const menu = this.querySelector<HTMLDetailsElement>("details.menu");
    if (menu) menu.open = false;
  }

  private openDialog(tag: "sa-create-dialog" | "sa-adopt-dialog"): void {
    this.closeMenu();
    const dialog = this.querySelector(tag) as (HTMLElement & { open(): void }) | null;
    dialog?.open();
  }

  private setPrefs(p: Preferences): void {
    this.prefs = p;
    savePreferences(p);
    window.dispatchEvent(new CustomEvent("staragent-preferences"));
  }

  private async toggleNotifications(on: boolean): Promise<void> {
    if (!on) {
      this.setPrefs({ ...this.prefs, notify: false });
      return;
    }
    const result = await ReviewAlerts.enable();
    if (result === "granted") {
      this.setPrefs({ ...this.prefs, notify: true });
      this.toast("Notifications are on: you will hear about sessions that need review.");
    } else {
      this.setPrefs({ ...this.prefs, notify: false });
      this.toast(
        result === "unsupported"
          ? "This browser cannot show notifications for this page."
          : "The browser blocked notifications for this page; allow them in the site settings to turn them on.",
        "error",
      );
    }
  }

  private async testNotification(): Promise<void> {
    if (!(await this.alerts.test())) {
      this.toast("The browser did not show the notification; check its site settings for notifications.", "error");
    }
  }

  private applyTheme(): void {
    const theme = effectiveTheme(this.prefs.theme);
    if (document.documentElement.dataset.theme !== theme) {
      document.documentElement.dataset.theme = theme;
      window.dispatchEvent(new CustomEvent("staragent-theme"));
    }
  }

  private onVisibility(): void {
    if (document.visibilityState === "visible") {
      if (this.hiddenTimer !== undefined) clearTimeout(this.hiddenTimer);
      this.hiddenTimer = undefined;
      if (this.auth === "in" && !this.nodeStream.isRunning) this.nodeStream.start();
      return;
    }
    this.hiddenTimer = setTimeout(() => {
      this.hiddenTimer = undefined;
      if (document.visibilityState === "hidden") this.nodeStream.stop();
    }, HIDDEN_RELEASE_MS);
  }

  private onWake(): void {
    if (this.auth === "out") return;
    this.sessionStream.reconnectNow();
    if (this.nodeStream.isRunning) this.nodeStream.reconnectNow();
    for (const l of this.wakeListeners) l();
  }

  private watchViewport(): void {
    const vv = window.visualViewport;
    const root = document.documentElement;
    if (!vv) return;
    let frame = 0;
    const apply = () => {
      frame = 0;
      root.style.setProperty("--vv-height", `${Math.round(vv.height)}px`);
      root.style.setProperty("--vv-top", `${Math.round(vv.offsetTop)}px`);
    };
    const schedule = () => {
      if (frame === 0) frame = requestAnimationFrame(apply);
    };
    apply();
    vv.addEventListener("resize", schedule);
    vv.addEventListener("scroll", schedule);
    this.cleanups.push(() => {
      vv.removeEventListener("resize", schedule);
      vv.removeEventListener("scroll", schedule);
    });
  }

  private timeApply(start: number): void {
    void this.updateComplete.then(async () => {
      const list = this.querySelector("sa-session-list") as (HTMLElement & { updateComplete: Promise<boolean> }) | null;
      if (list) await list.updateComplete;
      this.applySamples.push(performance.now() - start);
      if (this.applySamples.length > MAX_APPLY_SAMPLES) this.applySamples.shift();
    });
    this.requestUpdate();
  }

  private markFirstList(): void {
    if (this.firstListMarked || !this.sessions.loaded) return;
    this.firstListMarked = true;
    performance.mark("staragent:first-session-list");
    // Warm the terminal's code while the person reads the list.
    const idle = window.requestIdleCallback ?? ((cb: () => void) => setTimeout(cb, 500));
    idle(() => void import("../sa-terminal/define.js"));
  }

  private toast(message: string, tone: "info" | "error" = "info"): void {
    (this.querySelector("sa-toasts") as SaToasts | null)?.show(message, tone);
  }

  private listen(target: EventTarget, type: string, handler: (e: Event) => void): void {
    target.addEventListener(type, handler);
    this.cleanups.push(() => target.removeEventListener(type, handler));
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "sa-app": SaApp;
  }
}
