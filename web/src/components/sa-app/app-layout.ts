import { html, nothing, type TemplateResult } from "lit";
import { type Route, sessionName } from "../../state/routes.js";
import type { SessionFilter } from "../../state/session-filter.js";
import type { SaEvent } from "../events.js";

/**
 * The top bar: the brand (home), the count in review (a link to the review filter), the pages, New
 * session, Adopt and the settings menu.
 */
export function renderTopBar(
  route: Route,
  review: number,
  menu: TemplateResult,
  openCreate: () => void,
  openAdopt: () => void,
): TemplateResult {
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
      <button class="primary" @click=${openCreate} title="New session (n)">
        <span aria-hidden="true">+</span><span class="wide-only">New session</span
        ><span class="visually-hidden narrow-only">New session</span>
      </button>
      <button class="wide-only" @click=${openAdopt}>Adopt</button>
      ${menu}
    </header>`;
}

/** What the panes need from the app. */
export interface PanesView {
  readonly filter: SessionFilter;
  readonly loading: boolean;
  /** Where the focus was when the route last changed (Router.focusAtChange). */
  readonly openedFrom: unknown;
  setFilter(filter: SessionFilter): void;
  /** The list showed its first snapshot. */
  rendered(): void;
}

/**
 * The main area: the nodes page, or the session list with the open session beside it (on a phone,
 * one of the two at a time).
 */
export function renderPanes(route: Route, p: PanesView): TemplateResult {
  const session = route.page === "sessions" ? route.session : undefined;
  return html`
  ${
    route.page === "nodes"
      ? html`<sa-node-list></sa-node-list>`
      : html`<div class="panes ${session ? "has-session" : ""}">
          <section class="list-pane" aria-label="Sessions">
            <sa-session-list
              .filter=${p.filter}
              .selected=${session ? sessionName(session.node, session.id) : ""}
              .loading=${p.loading}
              @sa-filter-change=${(e: SaEvent<"sa-filter-change">) => p.setFilter(e.detail)}
              @sa-rendered=${p.rendered}
            ></sa-session-list>
          </section>
          <section class="detail-pane" aria-label="Session">
            ${
              session && route.page === "sessions"
                ? html`<sa-session-view .node=${session.node} .sessionId=${session.id} .tab=${route.tab}
                    .openedFrom=${p.openedFrom}></sa-session-view>`
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
  }`;
}

/**
 * Where a plain click on one of the app's own links (`a[data-route]` inside `root`) goes, as a path
 * and query, for routing without reloading the page; undefined for other clicks and for modified ones,
 * which still open new tabs.
 */
export function routedClick(e: Event, root: Element): string | undefined {
  if (!(e instanceof MouseEvent) || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey) {
    return undefined;
  }
  const a = (e.target as HTMLElement | null)?.closest?.("a[data-route]") as HTMLAnchorElement | null;
  if (!a || !root.contains(a)) return undefined;
  const url = new URL(a.href);
  return url.pathname + url.search;
}
