import { Code, ConnectError } from "@connectrpc/connect";
import { consume } from "@lit/context";
import { html, nothing, type PropertyValues } from "lit";
import { property, state } from "lit/decorators.js";
import { unsafeHTML } from "lit/directives/unsafe-html.js";
import type { Session } from "../../../../gen/staragent/v1/session_pb.js";
import {
  ChangeKind,
  type FileChange,
  type GetChangesResponse,
  type GetFileDiffResponse,
} from "../../../../gen/staragent/v1/workspace_service_pb.js";
import { describeError } from "../../api/errors.js";
import { workspaceClient } from "../../api/session-clients.js";
import { type AppServices, appContext } from "../../state/app-context.js";
import { sessionPath } from "../../state/routes.js";
import {
  type DiffLine,
  type Hunk,
  pairedWords,
  parseUnifiedDiff,
  sideBySide,
  type WordPart,
} from "../../workspace/diff-model.js";
import { highlightLine, languageFor } from "../../workspace/highlight.js";
import { LightElement } from "../base/light-element.js";

/** Diff lines rendered at first, and added by each "Show more" (a 20 000-line diff stays responsive). */
const DIFF_PAGE_LINES = 400;
/** Wider than this, the diff is side by side; narrower (a phone), unified. */
const SIDE_BY_SIDE_QUERY = "(min-width: 900px)";

/** Each change kind's letter, as `git status --short` shows it, and its word for tooltips and assistive technology. */
const KIND: Readonly<Record<number, { letter: string; word: string }>> = {
  [ChangeKind.ADDED]: { letter: "A", word: "added" },
  [ChangeKind.MODIFIED]: { letter: "M", word: "modified" },
  [ChangeKind.DELETED]: { letter: "D", word: "deleted" },
  [ChangeKind.RENAMED]: { letter: "R", word: "renamed" },
  [ChangeKind.COPIED]: { letter: "C", word: "copied" },
  [ChangeKind.TYPE_CHANGED]: { letter: "T", word: "type changed" },
  [ChangeKind.UNMERGED]: { letter: "U", word: "conflict" },
  [ChangeKind.UNTRACKED]: { letter: "?", word: "untracked" },
};
const NO_KIND = { letter: "", word: "" };

/**
 * The Changes tab: what the session's agent changed in its git repository (branch, ahead/behind, the
 * files grouped staged / unstaged / untracked with lines added and removed), and the selected file's
 * diff, side by side on a wide screen and unified on a phone, highlighted, with the changed words of a
 * changed line marked. Read-only: nothing here writes. Reloads when the session's changed-file count
 * or branch changes while the tab is shown.
 */
export class SaChangesView extends LightElement {
  @property({ attribute: false }) session?: Session;
  @property({ attribute: false }) active = false;
  @consume({ context: appContext }) private app?: AppServices;
  @state() private changes?: GetChangesResponse;
  @state() private error = "";
  @state() private notRepository = false;
  @state() private selected?: { path: string; staged: boolean };
  @state() private diff?: GetFileDiffResponse;
  @state() private diffError = "";
  @state() private shownLines = DIFF_PAGE_LINES;
  @state() private wide = matchMedia(SIDE_BY_SIDE_QUERY).matches;
  private loadedFor = "";
  private readonly media = matchMedia(SIDE_BY_SIDE_QUERY);
  private readonly onMedia = () => {
    this.wide = this.media.matches;
  };

  override connectedCallback(): void {
    super.connectedCallback();
    this.media.addEventListener("change", this.onMedia);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.media.removeEventListener("change", this.onMedia);
  }

  protected override willUpdate(_changed: PropertyValues<this>): void {
    const s = this.session;
    if (!s || !this.active) return;
    const key = `${s.name}|${s.changedFiles}|${s.branch}`;
    if (key !== this.loadedFor) {
      this.loadedFor = key;
      void this.load();
    }
  }

  private async load(): Promise<void> {
    const s = this.session;
    if (!s || !this.app) return;
    try {
      this.changes = await workspaceClient(this.app.hub).getChanges({ name: s.name });
      this.error = "";
      this.notRepository = false;
      if (this.selected) void this.loadDiff(this.selected.path, this.selected.staged, false);
    } catch (err) {
      this.changes = undefined;
      this.notRepository = err instanceof ConnectError && err.code === Code.FailedPrecondition;
      this.error = describeError(err);
    }
  }

  private async loadDiff(path: string, staged: boolean, reset = true): Promise<void> {
    const s = this.session;
    if (!s || !this.app) return;
    this.selected = { path, staged };
    if (reset) {
      this.diff = undefined;
      this.shownLines = DIFF_PAGE_LINES;
    }
    try {
      const diff = await workspaceClient(this.app.hub).getFileDiff({ name: s.name, path, staged });
      if (this.selected?.path === path && this.selected.staged === staged) {
        this.diff = diff;
        this.diffError = "";
      }
    } catch (err) {
      this.diff = undefined;
      this.diffError = describeError(err);
    }
  }

  protected override render() {
    const s = this.session;
    if (!s) return nothing;
    if (this.notRepository) {
      return html`<div class="empty-state changes-none" role="note">
        <p>${this.error}</p>
        <p><a href=${sessionPath(s.node, s.tmuxSession, "files")} data-route>Browse its files</a> instead.</p>
      </div>`;
    }
    if (this.error) return html`<div class="empty-state" role="alert"><p>${this.error}</p></div>`;
    const c = this.changes;
    if (!c) return html`<div class="empty-state" role="status"><p>Reading the changes…</p></div>`;
    const groups: Array<[string, boolean, FileChange[]]> = [
      ["Conflicts", false, c.files.filter((f) => f.change === ChangeKind.UNMERGED)],
      ["Staged", true, c.files.filter((f) => f.change !== ChangeKind.UNMERGED && f.staged)],
      [
        "Unstaged",
        false,
        c.files.filter((f) => f.change !== ChangeKind.UNMERGED && f.change !== ChangeKind.UNTRACKED && f.unstaged),
      ],
      ["Untracked", false, c.files.filter((f) => f.change === ChangeKind.UNTRACKED)],
    ];
    return html`<div class="changes ${this.wide ? "changes-wide" : "changes-narrow"}">
      <div class="changes-list">
        <p class="changes-branch">
          <span class="mono">${c.branch || `detached at ${c.headCommit.slice(0, 12) || "no commit"}`}</span>
          ${c.upstream ? html`<span class="muted"> → <span class="mono">${c.upstream}</span> ↑${c.ahead} ↓${c.behind}</span>` : nothing}
          ${c.mergeInProgress ? html`<span class="tag tag-offline">merge in progress</span>` : nothing}
          ${c.rebaseInProgress ? html`<span class="tag tag-offline">rebase in progress</span>` : nothing}
          <button class="changes-refresh" @click=${() => this.load()}>Refresh</button>
        </p>
        ${c.files.length === 0 ? html`<p class="muted">No changes.</p>` : nothing}
        ${groups.map(([title, staged, files]) =>
          files.length === 0
            ? nothing
            : html`<section class="changes-group" aria-label=${title}>
                <h2>${title} <span class="muted">${files.length}</span></h2>
                <ul class="ws-list">${files.map((f) => this.fileRow(f, staged))}</ul>
              </section>`,
        )}
        ${c.filesTruncated ? html`<p class="muted">Only the first ${c.files.length} changed files are shown.</p>` : nothing}
      </div>
      <div class="changes-diff">${this.renderDiff()}</div>
    </div>`;
  }

  private fileRow(f: FileChange, staged: boolean) {
    const kind = staged ? f.stagedChange || f.change : f.unstagedChange || f.change;
    const { letter, word } = KIND[kind] ?? NO_KIND;
    const selected = this.selected?.path === f.path && this.selected.staged === staged;
    return html`<li>
      <button class="ws-row change-file" aria-pressed=${selected ? "true" : "false"} title=${word} @click=${() => this.loadDiff(f.path, staged)}>
        <span class="change-kind kind-${letter === "?" ? "u" : letter.toLowerCase()}" aria-label=${word}>${letter}</span>
        <span class="change-path mono"><bdi>${f.previousPath && (kind === ChangeKind.RENAMED || kind === ChangeKind.COPIED) ? `${f.previousPath} → ${f.path}` : f.path}</bdi></span>
        ${f.binary ? html`<span class="muted">binary</span>` : html`<span class="change-added">+${f.linesAdded}</span> <span class="change-removed">−${f.linesRemoved}</span>`}
      </button>
    </li>`;
  }

  private renderDiff() {
    if (!this.selected) return html`<p class="muted">Select a file to see its diff.</p>`;
    if (this.diffError) return html`<p role="alert">${this.diffError}</p>`;
    const d = this.diff;
    if (!d) return html`<p role="status" class="muted">Loading the diff…</p>`;
    const head = html`<h2 class="diff-title mono"><bdi>${d.path}</bdi>${this.selected.staged ? html` <span class="tag">staged</span>` : nothing}</h2>`;
    if (d.binary) return html`${head}<p class="muted">${d.binarySummary}</p>`;
    const hunks = parseUnifiedDiff(d.diff);
    const language = languageFor(d.path);
    let budget = this.shownLines;
    const total = hunks.reduce((n, h) => n + h.lines.length, 0);
    const shown = hunks.map((h) => {
      const lines = h.lines.slice(0, Math.max(0, budget));
      budget -= lines.length;
      return { header: h.header, lines };
    });
    return html`${head}
      ${d.truncated ? html`<p class="muted">This diff is long and was cut at its limit.</p>` : nothing}
      <table class="diff ${this.wide ? "diff-split" : "diff-unified"}">
        ${shown.filter((h) => h.lines.length > 0).map((h) => this.renderHunk(h, language))}
      </table>
      ${
        total > this.shownLines
          ? html`<button class="diff-more" @click=${() => {
              this.shownLines += DIFF_PAGE_LINES;
            }}>Show more (${total - this.shownLines} more lines)</button>`
          : nothing
      }`;
  }

  private renderHunk(h: Hunk, language: string | undefined) {
    const words = pairedWords(h.lines);
    const text = (line: DiffLine) =>
      html`<td class="diff-line diff-${line.kind}"><span class="diff-sign" aria-hidden="true">${line.kind === "add" ? "+" : line.kind === "del" ? "−" : " "}</span>${this.lineText(line, words.get(line), language)}</td>`;
    const header = html`<tr class="diff-hunk"><td colspan=${this.wide ? 4 : 3}>${h.header}</td></tr>`;
    if (this.wide) {
      const side = (line: DiffLine | undefined, no: number | undefined) =>
        line
          ? html`<td class="diff-no">${no ?? ""}</td>${text(line)}`
          : html`<td class="diff-no"></td><td class="diff-line diff-empty"></td>`;
      return html`<tbody>${header}${sideBySide(h.lines).map(
        (row) => html`<tr>${side(row.left, row.left?.oldNo)}${side(row.right, row.right?.newNo)}</tr>`,
      )}</tbody>`;
    }
    return html`<tbody>${header}${h.lines.map(
      (line) =>
        html`<tr><td class="diff-no">${line.oldNo ?? ""}</td><td class="diff-no">${line.newNo ?? ""}</td>${text(line)}</tr>`,
    )}</tbody>`;
  }

  private lineText(line: DiffLine, parts: WordPart[] | undefined, language: string | undefined) {
    if (parts) {
      return parts.map((p) => (p.changed ? html`<mark class="word-${line.kind}">${p.text}</mark>` : p.text));
    }
    const highlighted = highlightLine(line.text, language);
    return highlighted === undefined ? line.text : unsafeHTML(highlighted);
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "sa-changes-view": SaChangesView;
  }
}
