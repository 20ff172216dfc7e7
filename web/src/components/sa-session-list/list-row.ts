import { timestampDate } from "@bufbuild/protobuf/wkt";
import { html, nothing, type TemplateResult } from "lit";
import { styleMap } from "lit/directives/style-map.js";
import { Connectivity } from "../../../../gen/staragent/v1/node_service_pb.js";
import { type Session, SessionOrigin, SessionStatus, SessionType } from "../../../../gen/staragent/v1/session_pb.js";
import { exitLabel } from "../../state/exit-labels.js";
import { sessionPath } from "../../state/routes.js";
import type { RowWindow } from "../../state/row-window.js";
import type { ListRow } from "../../state/session-filter.js";
import {
  cliName,
  connectivityLook,
  originText,
  reasonParts,
  relativeTime,
  statusLook,
} from "../../state/session-labels.js";
import { visibleText } from "../../util/visible-text.js";

/** Which row the list is at: the open session, and the one Tab reaches. */
export interface RowState {
  /** The resource name of the session open beside the list. */
  readonly selected: string;
  /** The key of the row that is the list's tab stop. */
  readonly activeKey: string;
}

/**
 * One row of the virtualized list, placed at its offset: a node's or a folder's header, the system
 * sessions' header, or a session (status with glyph and word, name, age, why, CLI, folder, tags; in
 * the compact density the first line and why only, with the node when grouped by folder).
 * Text from the agents is shown as text, never as HTML.
 */
export function renderRow(window: RowWindow, index: number, at: RowState): TemplateResult {
  const row = window.rows[index] as ListRow;
  const style = styleMap({ transform: `translateY(${window.top(index)}px)`, height: `${window.height(index)}px` });
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
  if (row.kind === "folder") {
    return html`<div class="vrow row-folder" role="listitem" style=${style} data-key=${row.key}>
      <h2 class="folder-title" title=${visibleText(row.folder)}><bdi>${visibleText(row.folder)}</bdi></h2>
      <span class="node-count muted">${row.shown} session${row.shown === 1 ? "" : "s"}</span>
    </div>`;
  }
  const s = row.session;
  const look = statusLook(s.status);
  const selected = s.name === at.selected;
  const active = at.activeKey === s.name;
  const time = s.lastActivityTime ? timestampDate(s.lastActivityTime) : undefined;
  return html`<div
    class="vrow row-session ${selected ? "selected" : ""} ${s.nodeUnreachable ? "unreachable" : ""} ${s.status === SessionStatus.REVIEW ? "needs-review" : ""}"
    role="listitem"
    aria-setsize=${window.sessionCount}
    aria-posinset=${window.position(index)}
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
        <span class="row-name">${visibleText(s.tmuxSession)}</span>
        <span class="row-time muted" title=${time ? time.toLocaleString() : ""}>${relativeTime(time)}</span>
      </span>
      ${renderReason(s)}
      <span class="row-line row-meta muted">
        <span class="row-cli">${cliName(s.cli)}</span>
        ${s.usage ? html`<sa-context-meter .usage=${s.usage}></sa-context-meter>` : nothing}
        <span class="row-cwd" title=${visibleText(s.cwd)}><bdi>${visibleText(s.cwd)}</bdi></span>
        ${s.changedFiles ? html`<span class="tag row-changes" title=${`${s.changedFiles} changed files${s.branch ? ` on ${visibleText(s.branch)}` : ""}`}>${s.changedFiles} changed</span>` : nothing}
        ${s.nodeUnreachable ? html`<span class="tag tag-offline">unreachable</span>` : nothing}
        ${((e) => (e ? html`<span class="tag tag-exited" title=${e.title}>${e.text}</span>` : nothing))(exitLabel(s))}
        ${s.unmanageableReason !== "" ? html`<span class="tag tag-offline" title=${s.unmanageableReason}>rename in tmux to manage</span>` : nothing}
        ${s.origin !== SessionOrigin.CREATED && s.type !== SessionType.SYSTEM ? html`<span class="tag">${originText(s.origin)}</span>` : nothing}
      </span>
    </a>
    ${(s.pendingPrompt?.choices.length ?? 0) > 0 ? html`<sa-prompt-card compact .session=${s}></sa-prompt-card>` : nothing}
  </div>`;
}

/**
 * What the session waits for, in words. A finished turn's state ("Turn finished: ") is its own span,
 * which the compact density hides: its row shows the reply's last line alone.
 */
function renderReason(s: Session): TemplateResult {
  const why = reasonParts(s);
  return html`<span class="row-line row-reason ${s.status === SessionStatus.REVIEW ? "reason-review" : "muted"}" title=${why.lead + why.rest}><span class=${why.rest ? "reason-lead" : ""}>${why.lead}</span>${why.rest}</span>`;
}
