import type { Route } from "../state/routes.js";

/** How long the page waits to warm the later views' code where the browser has no idle callback. */
const WARM_FALLBACK_MS = 500;

let views: Promise<unknown> | undefined;
let terminal: Promise<unknown> | undefined;

/**
 * Loads the chunk of the elements the first session list does not show (define-views.ts) once; the
 * elements already in the page upgrade when it has run.
 */
export function loadViews(): Promise<unknown> {
  views ??= import("./define-views.js");
  return views;
}

/** Loads the terminal's chunk (sa-terminal/define.ts) once. */
export function loadTerminal(): Promise<unknown> {
  terminal ??= import("./sa-terminal/define.js");
  return terminal;
}

/** Loads the views' chunk, then the terminal's, once the browser is idle (after the first list). */
export function warmLaterViews(): void {
  const idle = window.requestIdleCallback ?? ((cb: () => void) => setTimeout(cb, WARM_FALLBACK_MS));
  idle(() => void loadViews().then(loadTerminal));
}

/** True when `route` shows an element of the views' chunk: an open session, or the nodes page. */
export function routeNeedsViews(route: Route): boolean {
  return route.page === "nodes" || (route.page === "sessions" && route.session !== undefined);
}

/**
 * The element `tag` of the views' chunk, once that chunk has run and the element has rendered, so its
 * methods (a dialog's `open`) find their parts; undefined when the page has none.
 */
export async function viewElement<K extends keyof HTMLElementTagNameMap>(
  root: ParentNode,
  tag: K,
): Promise<HTMLElementTagNameMap[K] | undefined> {
  await loadViews();
  const element = root.querySelector(tag);
  if (!element) return undefined;
  await (element as Partial<{ updateComplete: Promise<unknown> }>).updateComplete;
  return element;
}
