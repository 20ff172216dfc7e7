import type { Route } from "../state/routes.js";

/** How long the page waits to warm the later views' code where the browser has no idle callback. */
const WARM_FALLBACK_MS = 500;

/** What the page says when a chunk could not be fetched (the network, or a Hub updated meanwhile). */
export const VIEWS_FAILED = "This part of the dashboard could not be loaded. Check the connection and try again.";

/** Something that reports a failure to the person (the app's toast). */
export type Report = (message: string, tone: "error") => void;

/**
 * `load` run once: its promise is kept while it succeeds, and forgotten when it fails, so the next call
 * tries again (a chunk that failed to fetch on a flaky network is fetched again on the next use).
 */
export function loadOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= load().catch((err: unknown) => {
      loading = undefined;
      throw err;
    });
    return loading;
  };
}

/**
 * Loads the chunk of the elements the first session list does not show (define-views.ts); the elements
 * already in the page upgrade when it has run.
 */
export const loadViews = loadOnce(() => import("./define-views.js"));

/** Loads the terminal's chunk (sa-terminal/define.ts). */
export const loadTerminal = loadOnce(() => import("./sa-terminal/define.js"));

/** Routes the views' chunk was asked for (a route is one object until the page goes elsewhere). */
const askedFor = new WeakSet<Route>();

/**
 * Loads the views' chunk when `route` shows one of its elements, and tells the person when it could not
 * be: once per route shown, not at every render of the page (which, offline, would fetch and report
 * again at each change of the list).
 */
export function loadViewsFor(route: Route, report: Report): void {
  if (!routeNeedsViews(route) || askedFor.has(route)) return;
  askedFor.add(route);
  loadViews().catch(() => report(VIEWS_FAILED, "error"));
}

/**
 * Loads the views' chunk, then the terminal's, once the browser is idle (after the first list). A
 * failure here is not reported: the first use fetches again, and reports.
 */
export function warmLaterViews(): void {
  const idle = window.requestIdleCallback ?? ((cb: () => void) => setTimeout(cb, WARM_FALLBACK_MS));
  idle(
    () =>
      void loadViews()
        .then(loadTerminal)
        .catch(() => undefined),
  );
}

/** True when `route` shows an element of the views' chunk: an open session, or the nodes page. */
export function routeNeedsViews(route: Route): boolean {
  return route.page === "nodes" || (route.page === "sessions" && route.session !== undefined);
}

/**
 * The element `tag` of the views' chunk, once that chunk has run and the element has rendered, so its
 * methods (a dialog's `open`) find their parts; undefined when the page has none, or when the chunk
 * could not be loaded (then reported).
 */
export async function viewElement<K extends keyof HTMLElementTagNameMap>(
  root: ParentNode,
  tag: K,
  report: Report,
): Promise<HTMLElementTagNameMap[K] | undefined> {
  try {
    await loadViews();
  } catch {
    report(VIEWS_FAILED, "error");
    return undefined;
  }
  const element = root.querySelector(tag);
  if (!element) return undefined;
  await (element as Partial<{ updateComplete: Promise<unknown> }>).updateComplete;
  return element;
}
