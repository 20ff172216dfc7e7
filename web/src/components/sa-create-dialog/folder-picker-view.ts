import { html, nothing } from "lit";
import type { Directory } from "../../../../gen/staragent/v1/session_service_pb.js";
import type { RecentChoice } from "../../state/recent-folders.js";
import { visibleText } from "../../util/visible-text.js";
import { plainInput } from "../base/plain-input.js";
import type { FolderBrowser } from "./folder-browser.js";

/** What the folder picker shows and does, from the create dialog. */
export interface FolderPickerView {
  readonly node: string;
  readonly folders: FolderBrowser;
  /** The recent folders of this node, each with its label (recentOn). */
  readonly recent: readonly RecentChoice[];
  /** The name typed for a new folder. */
  readonly newFolder: string;
  readonly setNewFolder: (name: string) => void;
  /** Picks folder `path`: it becomes the folder field's value and the picker lists it. */
  readonly enter: (path: string) => void;
  readonly makeFolder: () => void;
}

/** The recently used folders as buttons (nothing before the first session started here). */
export function renderRecentFolders(v: FolderPickerView) {
  if (v.recent.length === 0) return nothing;
  return html`<div class="recent-folders" role="group" aria-label="Recently used on ${v.node}">
    <span class="hint">Recent:</span>
    ${v.recent.map(
      (r) =>
        html`<button type="button" class="recent-folder" title=${r.cwd} @click=${() => v.enter(r.cwd)}>${r.label}</button>`,
    )}
  </div>`;
}

/** The folders of the listed folder on the node: go in, go up, make one. */
export function renderFolderPicker(v: FolderPickerView) {
  const b = v.folders;
  const listing = b.listing;
  const here = listing?.directory;
  const shown = b.shown();
  return html`<div class="folder-picker" role="group" aria-label="Browse ${v.node}">
    <div class="picker-head">
      <button
        type="button"
        class="picker-up"
        aria-label="Up one level"
        ?disabled=${!listing || listing.parentPath === ""}
        @click=${() => listing && v.enter(listing.parentPath)}
      >
        ↑ Up
      </button>
      <span class="picker-path mono"><bdi>${here ? visibleText(here.path) : b.busy ? "Listing…" : ""}</bdi></span>
      ${gitBadge(here)}
    </div>
    ${b.error ? html`<p class="hint error-text picker-error" role="alert">${b.error}</p>` : nothing}
    <ul class="picker-list" aria-label="Subdirectories of ${here?.path ?? "this one"}" aria-busy=${b.busy ? "true" : "false"}>
      ${shown.map(
        (d: Directory) =>
          html`<li>
            <button type="button" class="picker-entry" @click=${() => v.enter(d.path)}>
              <span class="picker-name">${d.name}</span>
              ${gitBadge(d)}
            </button>
          </li>`,
      )}
      ${listing && shown.length === 0 ? html`<li class="hint picker-empty">${b.prefix ? `No folder here starts with “${b.prefix}”.` : "No folders here."}</li>` : nothing}
      ${listing?.truncated ? html`<li class="hint">More folders: type the start of a name.</li>` : nothing}
    </ul>
    <div class="picker-new">
      <label for="create-newdir" class="hint">New directory here</label>
      ${plainInput({
        id: "create-newdir",
        placeholder: "new-project",
        value: v.newFolder,
        onInput: v.setNewFolder,
        onEnter: v.makeFolder,
      })}
      <button type="button" ?disabled=${!here || v.newFolder.trim() === ""} @click=${v.makeFolder}>
        Make it
      </button>
    </div>
  </div>`;
}

/** "git · branch" beside a folder that is a repository. */
function gitBadge(d: Directory | undefined) {
  if (!d?.gitRepository) return nothing;
  return html`<span class="git-badge">git${d.branch ? ` · ${d.branch}` : ""}</span>`;
}
