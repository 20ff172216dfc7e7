import { parseRoute, type Route, sessionName } from "./routes.js";
import { filterSearch, parseFilter, type SessionFilter } from "./session-filter.js";
import type { Subscribable } from "./store-controller.js";

/** The parts of `location` and `history` the router reads and writes (a test passes its own). */
export interface RouterEnv {
  readonly location: Pick<Location, "pathname" | "search" | "origin">;
  readonly history: Pick<History, "pushState" | "replaceState">;
  /** Where the keyboard focus is (the page's `document.activeElement`). */
  readonly focused?: () => unknown;
}

/**
 * Where the dashboard is: the route and the list's filter, both kept in the address bar so a link or a
 * reload shows the same thing. Going to a path keeps the list's filter unless the path brings its own.
 * Only same-origin paths are followed. DOM-free apart from the location, history and focus it is given.
 */
export class Router implements Subscribable {
  private currentRoute: Route;
  private currentFilter: SessionFilter;
  private focusAtRouteChange: unknown;
  private readonly listeners = new Set<() => void>();

  constructor(private readonly env: RouterEnv = { location, history, focused: () => document.activeElement }) {
    this.currentRoute = parseRoute(env.location.pathname, env.location.search);
    this.currentFilter = parseFilter(env.location.search);
    this.focusAtRouteChange = env.focused?.();
  }

  /** The page shown. */
  get route(): Route {
    return this.currentRoute;
  }

  /**
   * Where the focus was when the route last changed (the link or row the person used, or nothing on
   * a page load): a view that arrives later moves the focus only if the person has not moved it since.
   */
  get focusAtChange(): unknown {
    return this.focusAtRouteChange;
  }

  /** The list's filter. */
  get filter(): SessionFilter {
    return this.currentFilter;
  }

  /** The resource name of the session on screen, if one is. */
  get viewedSession(): string | undefined {
    const r = this.currentRoute;
    return r.page === "sessions" && r.session ? sessionName(r.session.node, r.session.id) : undefined;
  }

  /** The current path with its query (where a login returns to). */
  get here(): string {
    return this.env.location.pathname + this.env.location.search;
  }

  /** Goes to a dashboard path (adds a history entry unless `replace`). */
  navigate(path: string, options: { replace?: boolean } = {}): void {
    const url = new URL(path, this.env.location.origin);
    if (url.origin !== this.env.location.origin) return;
    let search = url.search;
    if (search === "" && url.pathname !== "/login") search = filterSearch(this.currentFilter);
    const target = `${url.pathname}${search}`;
    if (target !== this.here) {
      if (options.replace) this.env.history.replaceState(null, "", target);
      else this.env.history.pushState(null, "", target);
    }
    this.sync();
  }

  /** Replaces the address without a new history entry (the login page, a logout). */
  replace(path: string): void {
    this.env.history.replaceState(null, "", path);
    this.sync();
  }

  /** Changes the list's filter; the address follows without a new history entry. */
  setFilter(filter: SessionFilter): void {
    this.currentFilter = filter;
    this.env.history.replaceState(null, "", `${this.env.location.pathname}${filterSearch(filter)}`);
    this.notify();
  }

  /** Reads the address again (after back/forward). */
  sync(): void {
    this.focusAtRouteChange = this.env.focused?.();
    this.currentRoute = parseRoute(this.env.location.pathname, this.env.location.search);
    this.currentFilter = parseFilter(this.env.location.search);
    this.notify();
  }

  /** Calls `listener` after each change; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private notify(): void {
    for (const l of this.listeners) l();
  }
}
