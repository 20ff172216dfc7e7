import { timestampDate } from "@bufbuild/protobuf/wkt";
import { consume } from "@lit/context";
import { html, nothing, type PropertyValues } from "lit";
import { property, state } from "lit/decorators.js";
import { repeat } from "lit/directives/repeat.js";
import { styleMap } from "lit/directives/style-map.js";
import { Connectivity } from "../../../../gen/staragent/v1/node_service_pb.js";
import { SessionOrigin, SessionStatus, SessionType } from "../../../../gen/staragent/v1/session_pb.js";
import { type AppServices, appContext } from "../../state/app-context.js";
import { sessionPath } from "../../state/routes.js";
import {
  buildRows,
  CLI_FILTERS,
  isFiltered,
  type ListRow,
  NO_FILTER,
  type SessionFilter,
  STATUS_FILTERS,
  type StatusCounts,
} from "../../state/session-filter.js";
import {
  cliName,
  connectivityLook,
  originText,
  reasonText,
  relativeTime,
  statusLook,
} from "../../state/session-labels.js";
import { StoreController } from "../../state/store-controller.js";
import { emit, LightElement } from "../base/light-element.js";

/** Row heights in pixels; fixed so the list can be virtualized without measuring. */
export const ROW_HEIGHTS: Record<ListRow["kind"], number> = { node: 44, system: 30, session: 72 };
/** Pixels rendered above and below the visible part, so fast scrolling shows no gaps. */
const OVERSCAN_PX = 360;
/** How often "3 min ago" is redrawn. */
const CLOCK_TICK_MS = 30_000;

const STATUS_FILTER_LABELS: Record<(typeof STATUS_FILTERS)[number], string> = {
  all: "All",
  review: "Review",
  working: "Working",
  idle: "Idle",
};

/**
 * The list of every session, grouped by node with each node's connectivity, agent sessions apart from
 * system sessions, with filters (status, CLI, node) and search. Only the rows in view exist in the page
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
  @state() private activeKey = "";

  private rows: ListRow[] = [];
  private offsets: number[] = [0];
  /** For each row, its position among the session rows (1-based; 0 for headers), for aria-posinset. */
  private positions: number[] = [];
  private counts: StatusCounts = { all: 0, review: 0, working: 0, idle: 0 };
  private builtFor = { version: -1, nodes: undefined as unknown, filter: NO_FILTER };
  private scroller: HTMLElement | null = null;
  private resizeObserver: ResizeObserver | undefined;
  private frame = 0;
  private clock: ReturnType<typeof setInterval> | undefined;
  private focusAfterRender = false;
  private announcedRender = false;

  constructor() {
    super();
    new StoreController(this, () => (this.app ? [this.app.sessions, this.app.nodes] : []));
  }

  override connectedCallback(): void {
    super.connectedCallback();
    this.clock = setInterval(() => this.requestUpdate(), CLOCK_TICK_MS);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    if (this.clock !== undefined) clearInterval(this.clock);
    this.resizeObserver?.disconnect();
    if (this.frame) cancelAnimationFrame(this.frame);
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    const app = this.app;
    if (!app) return;
    if (
      this.builtFor.version !== app.sessions.version ||
      this.builtFor.nodes !== app.nodes.nodes ||
      this.builtFor.filter !== this.filter
    ) {
      const built = buildRows(app.sessions.all(), app.nodes.nodes, app.sessions.unreachable, this.filter);
      this.keepFocusInList(built.rows);
      this.rows = built.rows;
      this.counts = built.counts;
      const offsets = new Array<number>(this.rows.length + 1);
      offsets[0] = 0;
      for (let i = 0; i < this.rows.length; i++) {
        offsets[i + 1] = (offsets[i] ?? 0) + ROW_HEIGHTS[(this.rows[i] as ListRow).kind];
      }
      this.offsets = offsets;
      let position = 0;
      this.positions = this.rows.map((r) => (r.kind === "session" ? ++position : 0));
      this.builtFor = { version: app.sessions.version, nodes: app.nodes.nodes, filter: this.filter };
    }
    if (changed.has("selected") && this.selected) this.activeKey = this.selected;
  }

  protected override firstUpdated(): void {
    this.scroller = this.querySelector(".vlist");
    if (this.scroller) {
      this.viewportHeight = this.scroller.clientHeight || this.viewportHeight;
      this.resizeObserver = new ResizeObserver(() => {
        if (this.scroller) this.viewportHeight = this.scroller.clientHeight;
      });
      this.resizeObserver.observe(this.scroller);
    }
  }

  protected override updated(changed: PropertyValues<this>): void {
    if (!this.loading && !this.announcedRender) {
      this.announcedRender = true;
      emit(this, "sa-rendered", undefined);
    }
    if (changed.has("selected") && this.selected) this.revealKey(this.selected, false);
    if (this.focusAfterRender) {
      this.focusAfterRender = false;
      this.querySelector<HTMLElement>(`.vrow[data-key="${CSS.escape(this.activeKey)}"] a`)?.focus({
        preventScroll: true,
      });
    }
  }

  protected override render() {
    return html`${this.renderTools()}
      <div class="vlist" @scroll=${this.onScroll} @keydown=${this.onKeyDown} @focusin=${this.onFocusIn}>
        ${this.renderBody()}
      </div>`;
  }

  private renderTools() {
    const f = this.filter;
    const nodes = this.app?.nodes.nodes ?? [];
    const nodeIds = new Set<string>(nodes.map((n) => n.name.replace(/^nodes\//, "")));
    for (const s of this.app?.sessions.all() ?? []) nodeIds.add(s.node);
    return html`<div class="list-tools">
      <input
        type="search"
        class="list-search"
        placeholder="Search name, folder, prompt…"
        aria-label="Search sessions"
        .value=${f.query}
        @input=${(e: Event) => this.change({ query: (e.target as HTMLInputElement).value })}
        @keydown=${this.onSearchKey}
      />
      <div class="status-filter" role="group" aria-label="Show sessions by status">
        ${STATUS_FILTERS.map(
          (s) => html`<button
            class="chip ${s !== "all" ? `chip-${s}` : ""}"
            aria-pressed=${f.status === s ? "true" : "false"}
            @click=${() => this.change({ status: s })}
          >
            ${STATUS_FILTER_LABELS[s]}${this.loading ? nothing : html` <span class="chip-count">${this.counts[s]}</span>`}
          </button>`,
        )}
      </div>
      <div class="select-filters">
        <select aria-label="CLI" @change=${(e: Event) => this.change({ cli: (e.target as HTMLSelectElement).value as SessionFilter["cli"] })}>
          ${CLI_FILTERS.map((c) => html`<option value=${c} ?selected=${f.cli === c}>${c === "all" ? "Every CLI" : c}</option>`)}
        </select>
        <select aria-label="Node" @change=${(e: Event) => this.change({ node: (e.target as HTMLSelectElement).value })}>
          <option value="all" ?selected=${f.node === "all"}>Every node</option>
          ${[...nodeIds].map((id) => html`<option value=${id} ?selected=${f.node === id}>${id}</option>`)}
        </select>
        ${isFiltered(f) ? html`<button class="quiet" @click=${() => this.change(NO_FILTER)}>Clear</button>` : nothing}
      </div>
    </div>`;
  }

  private renderBody() {
    if (this.loading) {
      return html`<div class="empty-state" role="status"><p>Loading sessions…</p></div>`;
    }
    const sessionCount = this.app?.sessions.size ?? 0;
    if (sessionCount === 0 && this.rows.every((r) => r.kind !== "session")) {
      return html`${this.renderRows()}
        <div class="empty-state list-empty">
          <h2>No sessions yet</h2>
          <p>Start an agent with <strong>New session</strong>, or adopt agents that already run in tmux.</p>
          <p>
            <button class="primary" @click=${() => emit(this, "sa-open-dialog", "create")}>New session</button>
            <button @click=${() => emit(this, "sa-open-dialog", "adopt")}>Adopt…</button>
          </p>
        </div>`;
    }
    if (!this.rows.some((r) => r.kind === "session")) {
      return html`<div class="empty-state list-empty">
        <h2>Nothing matches</h2>
        <p>No session matches these filters.</p>
        <p><button @click=${() => this.change(NO_FILTER)}>Clear filters</button></p>
      </div>`;
    }
    return this.renderRows();
  }

  private renderRows() {
    const total = this.offsets[this.rows.length] ?? 0;
    const [first, last] = this.visibleRange();
    const visible: Array<{ row: ListRow; index: number }> = [];
    for (let i = first; i < last; i++) visible.push({ row: this.rows[i] as ListRow, index: i });
    const sessionTotal = this.rows.filter((r) => r.kind === "session").length;
    return html`<div class="vlist-inner" role="list" aria-label="Sessions, ${sessionTotal} shown" style=${styleMap({ height: `${total}px` })}>
      ${repeat(
        visible,
        (v) => v.row.key,
        (v) => this.renderRow(v.row, v.index, sessionTotal),
      )}
    </div>`;
  }

  private renderRow(row: ListRow, index: number, setSize: number) {
    const style = styleMap({
      transform: `translateY(${this.offsets[index] ?? 0}px)`,
      height: `${ROW_HEIGHTS[row.kind]}px`,
    });
    if (row.kind === "node") {
      const look = row.info ? connectivityLook(row.info.connectivity) : undefined;
      const reachable = row.reachable && look?.tone !== "offline";
      const shownLook = reachable ? look : connectivityLook(Connectivity.OFFLINE);
      return html`<div class="vrow row-node" role="listitem" style=${style} data-key=${row.key}>
        <h2 class="node-title">${row.label}</h2>
        ${shownLook ? html`<span class="connectivity tone-${shownLook.tone}"><span aria-hidden="true">${shownLook.glyph}</span>${shownLook.word}</span>` : nothing}
        <span class="node-count muted">${row.shown === 0 ? "no sessions" : `${row.shown} session${row.shown === 1 ? "" : "s"}`}</span>
      </div>`;
    }
    if (row.kind === "system") {
      return html`<div class="vrow row-system" role="listitem" style=${style} data-key=${row.key}>
        <h3 class="system-title">System sessions <span class="muted">(StarAgent's own services)</span></h3>
      </div>`;
    }
    const s = row.session;
    const look = statusLook(s.status);
    const selected = s.name === this.selected;
    const active = (this.activeKey || this.firstSessionKey()) === s.name;
    const time = s.lastActivityTime ? timestampDate(s.lastActivityTime) : undefined;
    const position = this.positions[index] ?? 0;
    return html`<div
      class="vrow row-session ${selected ? "selected" : ""} ${s.nodeUnreachable ? "unreachable" : ""} ${s.status === SessionStatus.REVIEW ? "needs-review" : ""}"
      role="listitem"
      aria-setsize=${setSize}
      aria-posinset=${position}
      style=${style}
      data-key=${s.name}
    >
      <a
        class="session-link"
        href=${sessionPath(s.node, s.tmuxSession)}
        data-route
        tabindex=${active ? "0" : "-1"}
        aria-current=${selected ? "page" : "false"}
      >
        <span class="row-line row-top">
          <span class="status tone-${look.tone}"><span class="glyph" aria-hidden="true">${look.glyph}</span>${look.word}</span>
          <span class="row-name">${s.tmuxSession}</span>
          <span class="row-time muted" title=${time ? time.toLocaleString() : ""}>${relativeTime(time)}</span>
        </span>
        <span class="row-line row-reason ${s.status === SessionStatus.REVIEW ? "reason-review" : "muted"}">${reasonText(s)}</span>
        <span class="row-line row-meta muted">
          <span class="row-cli">${cliName(s.cli)}</span>
          <span class="row-cwd" title=${s.cwd}><bdi>${s.cwd}</bdi></span>
          ${s.nodeUnreachable ? html`<span class="tag tag-offline">unreachable</span>` : nothing}
          ${s.unmanageableReason !== "" ? html`<span class="tag tag-offline" title=${s.unmanageableReason}>rename in tmux to manage</span>` : nothing}
          ${s.origin !== SessionOrigin.CREATED && s.type !== SessionType.SYSTEM ? html`<span class="tag">${originText(s.origin)}</span>` : nothing}
        </span>
      </a>
    </div>`;
  }

  private firstSessionKey(): string {
    return this.rows.find((r) => r.kind === "session")?.key ?? "";
  }

  private visibleRange(): [number, number] {
    const top = Math.max(0, this.listScroll - OVERSCAN_PX);
    const bottom = this.listScroll + this.viewportHeight + OVERSCAN_PX;
    const first = Math.max(0, this.indexAt(top));
    let last = first;
    while (last < this.rows.length && (this.offsets[last] ?? 0) < bottom) last++;
    return [first, last];
  }

  /** The row at a pixel offset (binary search over the row offsets). */
  private indexAt(y: number): number {
    let lo = 0;
    let hi = this.rows.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.offsets[mid] ?? 0) <= y) lo = mid;
      else hi = mid - 1;
    }
    return lo;
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
    if (row?.dataset.key) this.activeKey = row.dataset.key;
  };

  private readonly onSearchKey = (e: KeyboardEvent) => {
    if (e.key === "ArrowDown") {
      e.preventDefault();
      this.moveTo(this.firstSessionIndex());
    } else if (e.key === "Escape" && this.filter.query !== "") {
      e.preventDefault();
      this.change({ query: "" });
    }
  };

  private readonly onKeyDown = (e: KeyboardEvent) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const sessionIndexes = this.rows.flatMap((r, i) => (r.kind === "session" ? [i] : []));
    if (sessionIndexes.length === 0) return;
    const current = this.rows.findIndex((r) => r.key === (this.activeKey || this.firstSessionKey()));
    const pos = Math.max(0, sessionIndexes.indexOf(current));
    const page = Math.max(1, Math.floor(this.viewportHeight / ROW_HEIGHTS.session) - 1);
    let target: number | undefined;
    switch (e.key) {
      case "ArrowDown":
      case "j":
        target = sessionIndexes[Math.min(sessionIndexes.length - 1, pos + 1)];
        break;
      case "ArrowUp":
      case "k":
        target = sessionIndexes[Math.max(0, pos - 1)];
        break;
      case "PageDown":
        target = sessionIndexes[Math.min(sessionIndexes.length - 1, pos + page)];
        break;
      case "PageUp":
        target = sessionIndexes[Math.max(0, pos - page)];
        break;
      case "Home":
        target = sessionIndexes[0];
        break;
      case "End":
        target = sessionIndexes[sessionIndexes.length - 1];
        break;
      default:
        return;
    }
    e.preventDefault();
    if (target !== undefined) this.moveTo(target);
  };

  /**
   * When the row that has the keyboard focus leaves the list (opened and seen under the review filter,
   * stopped, filtered out), the focus moves to the session row that took its place, or the last one,
   * instead of falling out of the list.
   */
  private keepFocusInList(next: readonly ListRow[]): void {
    const focused = document.activeElement?.closest<HTMLElement>(".row-session");
    if (!focused || !this.contains(focused) || focused.dataset.key !== this.activeKey) return;
    if (next.some((r) => r.key === this.activeKey)) return;
    const gone = this.rows.findIndex((r) => r.key === this.activeKey);
    const sessions = next.flatMap((r, i) => (r.kind === "session" ? [i] : []));
    const at = sessions.find((i) => i >= gone) ?? sessions[sessions.length - 1];
    const row = at === undefined ? undefined : next[at];
    if (!row) return;
    this.activeKey = row.key;
    this.focusAfterRender = true;
  }

  private firstSessionIndex(): number {
    return this.rows.findIndex((r) => r.kind === "session");
  }

  private moveTo(index: number): void {
    const row = this.rows[index];
    if (!row) return;
    this.activeKey = row.key;
    this.revealKey(row.key, true);
    this.focusAfterRender = true;
    this.requestUpdate();
  }

  /** Scrolls so the row is in view (and rendered). */
  private revealKey(key: string, keyboard: boolean): void {
    const index = this.rows.findIndex((r) => r.key === key);
    if (index < 0 || !this.scroller) return;
    const top = this.offsets[index] ?? 0;
    const bottom = top + ROW_HEIGHTS[(this.rows[index] as ListRow).kind];
    const view = this.scroller;
    let next = view.scrollTop;
    if (top < view.scrollTop) next = Math.max(0, top - (keyboard ? 0 : ROW_HEIGHTS.node));
    else if (bottom > view.scrollTop + view.clientHeight) next = bottom - view.clientHeight;
    if (next !== view.scrollTop) {
      view.scrollTop = next;
      this.listScroll = next;
    }
  }

  private change(partial: Partial<SessionFilter>): void {
    emit(this, "sa-filter-change", { ...this.filter, ...partial });
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "sa-session-list": SaSessionList;
  }
}
