import { timestampDate } from "@bufbuild/protobuf/wkt";
import { consume } from "@lit/context";
import { html, nothing, type PropertyValues } from "lit";
import { property, state } from "lit/decorators.js";
import { unsafeHTML } from "lit/directives/unsafe-html.js";
import type { Session } from "../../../../gen/staragent/v1/session_pb.js";
import { type FileEntry, FileKind } from "../../../../gen/staragent/v1/workspace_service_pb.js";
import { describeError } from "../../api/errors.js";
import { workspaceClient } from "../../api/session-clients.js";
import { type AppServices, appContext } from "../../state/app-context.js";
import { relativeTime } from "../../state/session-labels.js";
import { renderMarkdown } from "../../util/markdown.js";
import { highlightLine, languageFor } from "../../workspace/highlight.js";
import { LightElement } from "../base/light-element.js";

/** Entries asked for per page of a folder. */
const FOLDER_PAGE_SIZE = 200;
/** Lines of a text preview that are highlighted (the rest shown plain, so a large file stays quick). */
const MAX_HIGHLIGHTED_LINES = 3_000;

/** What the preview shows. */
type Preview =
  | { readonly kind: "loading"; readonly path: string }
  | { readonly kind: "error"; readonly path: string; readonly message: string }
  | {
      readonly kind: "text";
      readonly path: string;
      readonly text: string;
      readonly truncated: boolean;
      readonly markdown: boolean;
    }
  | { readonly kind: "image"; readonly path: string; readonly url: string; readonly truncated: boolean }
  | { readonly kind: "binary"; readonly path: string; readonly size: bigint };

/**
 * The Files tab: the folders and files under the session's folder (folders first), and a preview of
 * the one chosen: text highlighted, Markdown rendered through a sanitizer (DOMPurify), images shown;
 * anything else as "binary". Secret-looking files are listed but not readable; every path rule is
 * the owning machine's (docs/workspace.md). Read-only.
 */
export class SaFilesView extends LightElement {
  @property({ attribute: false }) session?: Session;
  @property({ attribute: false }) active = false;
  @consume({ context: appContext }) private app?: AppServices;
  @state() private folder = "";
  @state() private entries: FileEntry[] = [];
  @state() private nextPageToken = "";
  @state() private error = "";
  @state() private preview?: Preview;
  @state() private rendered = true;
  private loadedFor = "";
  private imageUrl = "";

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    if (this.imageUrl) URL.revokeObjectURL(this.imageUrl);
  }

  protected override willUpdate(_changed: PropertyValues<this>): void {
    const s = this.session;
    if (!s || !this.active) return;
    if (this.loadedFor !== s.name) {
      this.loadedFor = s.name;
      void this.open("");
    }
  }

  private async open(folder: string, pageToken = ""): Promise<void> {
    const s = this.session;
    if (!s || !this.app) return;
    try {
      const res = await workspaceClient(this.app.hub).listFiles({
        name: s.name,
        path: folder,
        pageSize: FOLDER_PAGE_SIZE,
        pageToken,
      });
      this.folder = folder;
      this.entries = pageToken === "" ? res.entries : [...this.entries, ...res.entries];
      this.nextPageToken = res.nextPageToken;
      this.error = "";
    } catch (err) {
      this.error = describeError(err);
    }
  }

  private async read(entry: FileEntry): Promise<void> {
    const s = this.session;
    if (!s || !this.app) return;
    this.preview = { kind: "loading", path: entry.path };
    try {
      const res = await workspaceClient(this.app.hub).readFile({ name: s.name, path: entry.path });
      if (this.imageUrl) URL.revokeObjectURL(this.imageUrl);
      this.imageUrl = "";
      if (res.mimeType.startsWith("image/")) {
        this.imageUrl = URL.createObjectURL(new Blob([res.content as Uint8Array<ArrayBuffer>], { type: res.mimeType }));
        this.preview = { kind: "image", path: entry.path, url: this.imageUrl, truncated: res.truncated };
      } else if (res.mimeType.startsWith("text/")) {
        const text = new TextDecoder().decode(res.content);
        const markdown = res.mimeType.startsWith("text/markdown");
        this.rendered = markdown;
        this.preview = { kind: "text", path: entry.path, text, truncated: res.truncated, markdown };
      } else {
        this.preview = { kind: "binary", path: entry.path, size: res.size };
      }
    } catch (err) {
      this.preview = { kind: "error", path: entry.path, message: describeError(err) };
    }
  }

  protected override render() {
    if (!this.session) return nothing;
    const parts = this.folder === "" ? [] : this.folder.split("/");
    return html`<div class="files">
      <div class="files-list">
        <nav class="files-crumbs mono" aria-label="Folder">
          <button @click=${() => this.open("")}>${this.session.cwd}</button>
          ${parts.map((p, i) => html`/<button @click=${() => this.open(parts.slice(0, i + 1).join("/"))}>${p}</button>`)}
        </nav>
        ${this.error ? html`<p role="alert">${this.error}</p>` : nothing}
        <ul class="ws-list">
          ${this.folder !== "" ? html`<li><button class="ws-row file-entry" @click=${() => this.open(parts.slice(0, -1).join("/"))}>..</button></li>` : nothing}
          ${this.entries.map((e) => this.entryRow(e))}
        </ul>
        ${this.nextPageToken ? html`<button @click=${() => this.open(this.folder, this.nextPageToken)}>Show more</button>` : nothing}
        ${this.entries.length === 0 && !this.error ? html`<p class="muted">This folder is empty.</p>` : nothing}
      </div>
      <div class="files-preview">${this.renderPreview()}</div>
    </div>`;
  }

  private entryRow(e: FileEntry) {
    const folder = e.kind === FileKind.FOLDER;
    const time = e.modifyTime ? timestampDate(e.modifyTime) : undefined;
    return html`<li>
      <button class="ws-row file-entry ${folder ? "file-folder" : ""}" aria-pressed=${this.preview?.path === e.path ? "true" : "false"}
        @click=${() => (folder ? this.open(e.path) : this.read(e))}>
        <span class="file-name mono"><bdi>${e.name}</bdi>${folder ? "/" : ""}${e.kind === FileKind.SYMLINK ? html` <span class="muted">→</span>` : nothing}</span>
        ${e.secret ? html`<span class="tag" title="looks like a secret: not shown">secret</span>` : nothing}
        <span class="muted file-size">${folder ? "" : formatSize(e.size)}</span>
        <span class="muted file-time">${time ? relativeTime(time) : ""}</span>
      </button>
    </li>`;
  }

  private renderPreview() {
    const p = this.preview;
    if (!p) return html`<p class="muted">Select a file to preview it.</p>`;
    const head = html`<h2 class="preview-title mono"><bdi>${p.path}</bdi></h2>`;
    switch (p.kind) {
      case "loading":
        return html`${head}<p role="status" class="muted">Loading…</p>`;
      case "error":
        return html`${head}<p role="alert">${p.message}</p>`;
      case "binary":
        return html`${head}<p class="muted">binary, ${formatSize(p.size)}</p>`;
      case "image":
        return html`${head}<img class="preview-image" src=${p.url} alt=${p.path} />${p.truncated ? html`<p class="muted">Too large to show whole.</p>` : nothing}`;
      case "text":
        return html`${head}
          ${
            p.markdown
              ? html`<p><button @click=${() => {
                  this.rendered = !this.rendered;
                }}>${this.rendered ? "Show source" : "Show rendered"}</button></p>`
              : nothing
          }
          ${p.truncated ? html`<p class="muted">Only the start of this file is shown.</p>` : nothing}
          ${p.markdown && this.rendered ? html`<div class="preview-markdown">${unsafeHTML(renderMarkdown(p.text))}</div>` : this.renderText(p.text, p.path)}`;
    }
  }

  private renderText(text: string, path: string) {
    const language = languageFor(path);
    const lines = text.split("\n");
    return html`<pre class="preview-text"><code>${lines.map((line, i) => {
      const highlighted = i < MAX_HIGHLIGHTED_LINES ? highlightLine(line, language) : undefined;
      return html`<span class="preview-line">${highlighted === undefined ? line : unsafeHTML(highlighted)}</span>\n`;
    })}</code></pre>`;
  }
}

function formatSize(size: bigint): string {
  const n = Number(size);
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

declare global {
  interface HTMLElementTagNameMap {
    "sa-files-view": SaFilesView;
  }
}
