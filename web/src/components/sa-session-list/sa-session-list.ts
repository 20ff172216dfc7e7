import { consume } from "@lit/context";
import { html, type PropertyValues } from "lit";
import { property, state } from "lit/decorators.js";
import { repeat } from "lit/directives/repeat.js";
import { styleMap } from "lit/directives/style-map.js";
import { IntervalController } from "../../controllers/interval.js";
import { ResizeController } from "../../controllers/resize.js";
import { RovingFocusController, rovingStep } from "../../controllers/roving-focus.js";
import { type AppServices, appContext } from "../../state/app-context.js";
import { DEFAULT_LIST_VIEW, type ListView } from "../../state/list-view.js";
import { RowWindow } from "../../state/row-window.js";
import { buildRows, NO_FILTER, type SessionFilter, type StatusCounts } from "../../state/session-filter.js";
import { StoreController } from "../../state/store-controller.js";
import { LightElement } from "../base/light-element.js";
import { fire } from "../events.js";
import { renderRow } from "./list-row.js";
import { renderListTools } from "./list-tools.js";
import { renderListViewTools } from "./list-view-tools.js";

/** How often "3 min ago" is redrawn. */
const CLOCK_TICK_MS = 30_000;

/**
 * The list of every session, grouped by node with each node's connectivity (or by folder), agent
 * sessions apart from system sessions, with filters (status, CLI, node) and search, and the person's
 * layout (compact rows, attention order, hidden shells; list-view-tools.ts). Only the rows in view exist in the page
 * (a few dozen whatever the count), so hundreds of sessions scroll and update smoothly. Keyboard: arrows
 * (or j/k) move, Home/End jump, Enter opens, `/` searches.
 */
export class SaSessionList extends LightElement {
  /** What to show. */
  @property({ attribute: false }) filter: SessionFilter = NO_FILTER;
  /** The resource name of the session open beside the list. */
  @property({ attribute: false }) selected = "";
  /** True until the first snapshot arrived. */
  @property({ attribute: false }) loading = true;

  @consume({ context: appContext }) private app?: AppServices;
  @state() private listScroll = 0;
  @state() private viewportHeight = 800;

  private window = new RowWindow([]);
  private counts: StatusCounts = { all: 0, review: 0, working: 0, idle: 0 };
  private builtFor = { version: -1, nodes: undefined as unknown, filter: NO_FILTER, view: undefined as unknown };
  private scroller: HTMLElement | null = null;
  private frame = 0;
  private announcedRender = false;

  private readonly roving = new RovingFocusController(this, (key) =>
    this.querySelector<HTMLElement>(`.vrow[data-key="${CSS.escape(key)}"] a`),
  );
  private readonly resize = new ResizeController(this, {
    settleMs: 0,
    onResize: () => {
      if (this.scroller) this.viewportHeight = this.scroller.clientHeight;
    },
  });

  constructor() {
    super();
    new StoreController(this, () => (this.app ? [this.app.sessions, this.app.nodes, this.app.preferences] : []));
    new IntervalController(this, CLOCK_TICK_MS);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    if (this.frame) cancelAnimationFrame(this.frame);
    this.frame = 0;
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    const app = this.app;
    if (!app) return;
    if (
      this.builtFor.version !== app.sessions.version ||
      this.builtFor.nodes !== app.nodes.nodes ||
      this.builtFor.filter !== this.filter ||
      this.builtFor.view !== this.view
    ) {
      const view = this.view;
      const built = buildRows(app.sessions.all(), app.nodes.nodes, app.sessions.unreachable, this.filter, view);
      const next = new RowWindow(built.rows, view.density);
      this.keepFocusInList(next);
      this.window = next;
      this.counts = built.counts;
      this.builtFor = { version: app.sessions.version, nodes: app.nodes.nodes, filter: this.filter, view };
    }
    if (changed.has("selected") && this.selected) this.roving.activeKey = this.selected;
  }

  protected override firstUpdated(): void {
    this.scroller = this.querySelector(".vlist");
    if (this.scroller) {
      this.viewportHeight = this.scroller.clientHeight || this.viewportHeight;
      this.resize.observe(this.scroller);
    }
  }

  protected override updated(changed: PropertyValues<this>): void {
    if (!this.loading && !this.announcedRender) {
      this.announcedRender = true;
      fire(this, "sa-rendered", undefined);
    }
    if (changed.has("selected") && this.selected) this.revealKey(this.selected, false);
  }

  protected override render() {
    const nodeIds = new Set<string>((this.app?.nodes.nodes ?? []).map((n) => n.name.replace(/^nodes\//, "")));
    for (const s of this.app?.sessions.all() ?? []) nodeIds.add(s.node);
    return html`${renderListTools({
      filter: this.filter,
      nodeIds,
      counts: this.counts,
      loading: this.loading,
      change: (partial) => this.change(partial),
      onSearchKey: this.onSearchKey,
    })}
      ${renderListViewTools(this.view, (partial) => this.app?.preferences.update({ list: { ...this.view, ...partial } }))}
      <div class="vlist ${this.view.density === "compact" ? "compact" : ""}" @scroll=${this.onScroll} @keydown=${this.onKeyDown} @focusin=${this.onFocusIn}>
        ${this.renderBody()}
      </div>`;
  }

  private renderBody() {
    if (this.loading) {
      return html`<div class="empty-state" role="status"><p>Loading sessions…</p></div>`;
    }
    const sessionCount = this.app?.sessions.size ?? 0;
    if (sessionCount === 0 && this.window.sessionCount === 0) {
      return html`${this.renderRows()}
        <div class="empty-state list-empty">
          <h2>No sessions yet</h2>
          <p>Start an agent with <strong>New session</strong>, or adopt agents that already run in tmux.</p>
          <p>
            <button class="primary" @click=${() => fire(this, "sa-open-dialog", "create")}>New session</button>
            <button @click=${() => fire(this, "sa-open-dialog", "adopt")}>Adopt…</button>
          </p>
        </div>`;
    }
    if (this.window.sessionCount === 0) {
      return html`<div class="empty-state list-empty">
        <h2>Nothing matches</h2>
        <p>No session matches these filters.</p>
        <p><button @click=${() => this.change(NO_FILTER)}>Clear filters</button></p>
      </div>`;
    }
    return this.renderRows();
  }

  private renderRows() {
    const w = this.window;
    const [first, last] = w.visibleRange(this.listScroll, this.viewportHeight);
    const visible: number[] = [];
    for (let i = first; i < last; i++) visible.push(i);
    const at = { selected: this.selected, activeKey: this.roving.activeKey || w.firstSessionKey };
    return html`<div class="vlist-inner" role="list" aria-label="Sessions, ${w.sessionCount} shown" style=${styleMap({ height: `${w.totalHeight}px` })}>
      ${repeat(
        visible,
        (i) => w.rows[i]?.key ?? "",
        (i) => renderRow(w, i, at),
      )}
    </div>`;
  }

  private readonly onScroll = () => {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      if (this.scroller) this.listScroll = this.scroller.scrollTop;
    });
  };

  private readonly onFocusIn = (e: FocusEvent) => {
    const row = (e.target as HTMLElement).closest<HTMLElement>(".row-session");
    if (row?.dataset.key) this.roving.activeKey = row.dataset.key;
  };

  private readonly onSearchKey = (e: KeyboardEvent) => {
    if (e.key === "ArrowDown") {
      e.preventDefault();
      const first = this.window.sessionIndexes[0];
      if (first !== undefined) this.moveTo(first);
    } else if (e.key === "Escape" && this.filter.query !== "") {
      e.preventDefault();
      this.change({ query: "" });
    }
  };

  private readonly onKeyDown = (e: KeyboardEvent) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const indexes = this.window.sessionIndexes;
    if (indexes.length === 0) return;
    const current = this.window.indexOf(this.roving.activeKey || this.window.firstSessionKey);
    const pos = Math.max(0, indexes.indexOf(current));
    const page = Math.max(1, Math.floor(this.viewportHeight / this.window.height(indexes[0] ?? 0)) - 1);
    const step = rovingStep(e.key, pos, indexes.length, page);
    if (step === undefined) return;
    e.preventDefault();
    const target = indexes[step];
    if (target !== undefined) this.moveTo(target);
  };

  /**
   * When the row that has the keyboard focus leaves the list (opened and seen under the review filter,
   * stopped, filtered out), the focus moves to the session row that took its place, or the last one,
   * instead of falling out of the list.
   */
  private keepFocusInList(next: RowWindow): void {
    const focused = document.activeElement?.closest<HTMLElement>(".row-session");
    if (!focused || !this.contains(focused) || focused.dataset.key !== this.roving.activeKey) return;
    const key = this.window.replacementFor(this.roving.activeKey, next);
    if (key !== undefined) this.roving.focus(key);
  }

  private moveTo(index: number): void {
    const row = this.window.rows[index];
    if (!row) return;
    this.revealKey(row.key, true);
    this.roving.focus(row.key);
  }

  /** Scrolls so the row is in view (and rendered). */
  private revealKey(key: string, keyboard: boolean): void {
    const index = this.window.indexOf(key);
    const view = this.scroller;
    if (index < 0 || !view) return;
    const next = this.window.revealScroll(index, view.scrollTop, view.clientHeight, keyboard);
    if (next !== view.scrollTop) {
      view.scrollTop = next;
      this.listScroll = next;
    }
  }

  /** The person's layout of the list (a preference of this browser). */
  private get view(): ListView {
    return this.app?.preferences.value.list ?? DEFAULT_LIST_VIEW;
  }

  private change(partial: Partial<SessionFilter>): void {
    fire(this, "sa-filter-change", { ...this.filter, ...partial });
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "sa-session-list": SaSessionList;
  }
}
