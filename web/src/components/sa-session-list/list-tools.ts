import { html, nothing, type TemplateResult } from "lit";
import {
  CLI_FILTERS,
  isFiltered,
  NO_FILTER,
  type SessionFilter,
  STATUS_FILTERS,
  type StatusCounts,
} from "../../state/session-filter.js";
import { renderListViewMenuButton } from "./list-view-tools.js";

const STATUS_FILTER_LABELS: Record<(typeof STATUS_FILTERS)[number], string> = {
  all: "All",
  review: "Review",
  working: "Working",
  idle: "Idle",
};

/** What the list's tools show and do. */
export interface ListToolsView {
  readonly filter: SessionFilter;
  /** The node ids to filter by (known nodes and those sessions name). */
  readonly nodeIds: Iterable<string>;
  readonly counts: StatusCounts;
  /** True until the first snapshot: no counts then. */
  readonly loading: boolean;
  change(partial: Partial<SessionFilter>): void;
  onSearchKey(e: KeyboardEvent): void;
}

/** Search, the status chips with their counts, the CLI and node filters, and Clear. */
export function renderListTools(v: ListToolsView): TemplateResult {
  const f = v.filter;
  return html`<div class="list-tools">
    <input
      type="search"
      class="list-search"
      placeholder="Search name, folder, prompt…"
      aria-label="Search sessions"
      .value=${f.query}
      @input=${(e: Event) => v.change({ query: (e.target as HTMLInputElement).value })}
      @keydown=${v.onSearchKey}
    />
    <div class="status-filter" role="group" aria-label="Show sessions by status">
      ${STATUS_FILTERS.map(
        (s) => html`<button
          class="chip ${s !== "all" ? `chip-${s}` : ""}"
          aria-pressed=${f.status === s ? "true" : "false"}
          @click=${() => v.change({ status: s })}
        >
          ${STATUS_FILTER_LABELS[s]}${v.loading ? nothing : html` <span class="chip-count">${v.counts[s]}</span>`}
        </button>`,
      )}
    </div>
    <div class="select-filters">
      <select aria-label="CLI" @change=${(e: Event) => v.change({ cli: (e.target as HTMLSelectElement).value as SessionFilter["cli"] })}>
        ${CLI_FILTERS.map((c) => html`<option value=${c} ?selected=${f.cli === c}>${c === "all" ? "Every CLI" : c}</option>`)}
      </select>
      <select aria-label="Node" @change=${(e: Event) => v.change({ node: (e.target as HTMLSelectElement).value })}>
        <option value="all" ?selected=${f.node === "all"}>Every node</option>
        ${[...v.nodeIds].map((id) => html`<option value=${id} ?selected=${f.node === id}>${id}</option>`)}
      </select>
      ${isFiltered(f) ? html`<button class="quiet" @click=${() => v.change(NO_FILTER)}>Clear</button>` : nothing}
      ${renderListViewMenuButton()}
    </div>
  </div>`;
}
