import { html, type TemplateResult } from "lit";
import type { ListGroup, ListSort, ListView } from "../../state/list-view.js";

/**
 * The button that opens the layout controls on a phone, where they would take two rows above the
 * list (the stylesheet shows it and hides the controls below 600 px; on a desktop they show as they
 * are). It toggles the controls' `data-open` itself: opening a menu changes nothing else.
 */
export function renderListViewMenuButton(): TemplateResult {
  const toggle = (e: Event) => {
    const button = e.currentTarget as HTMLButtonElement;
    const tools = button.closest("sa-session-list")?.querySelector(".list-view-tools");
    const open = tools?.toggleAttribute("data-open") ?? false;
    button.setAttribute("aria-expanded", open ? "true" : "false");
  };
  return html`<button class="quiet list-view-menu" aria-haspopup="true" aria-expanded="false" title="Layout: density, order, groups, shells" @click=${toggle}>View</button>`;
}

/**
 * The list's layout controls, kept as this browser's preference: compact rows (about 36 px, for 30+
 * sessions), order by attention or name, groups by node or folder, and hiding shells StarAgent did
 * not start.
 */
export function renderListViewTools(view: ListView, change: (partial: Partial<ListView>) => void): TemplateResult {
  return html`<div class="list-view-tools" role="group" aria-label="List layout">
    <button
      class="chip"
      aria-pressed=${view.density === "compact" ? "true" : "false"}
      title="One line per session"
      @click=${() => change({ density: view.density === "compact" ? "comfortable" : "compact" })}
    >Compact</button>
    <select aria-label="Sort" @change=${(e: Event) => change({ sort: (e.target as HTMLSelectElement).value as ListSort })}>
      <option value="name" ?selected=${view.sort === "name"}>By name</option>
      <option value="attention" ?selected=${view.sort === "attention"}>Needs me first</option>
    </select>
    <select aria-label="Group" @change=${(e: Event) => change({ group: (e.target as HTMLSelectElement).value as ListGroup })}>
      <option value="node" ?selected=${view.group === "node"}>By node</option>
      <option value="folder" ?selected=${view.group === "folder"}>By folder</option>
    </select>
    <label class="hide-shells">
      <input type="checkbox" .checked=${view.hideShells} @change=${(e: Event) => change({ hideShells: (e.target as HTMLInputElement).checked })} />
      Hide shells
    </label>
  </div>`;
}
