import { timestampDate } from "@bufbuild/protobuf/wkt";
import { consume } from "@lit/context";
import { html, nothing } from "lit";
import { state } from "lit/decorators.js";
import { Connectivity, type Node } from "../../../../gen/staragent/v1/node_service_pb.js";
import { describeError, describeNodeRefusal } from "../../api/errors.js";
import { type AppServices, appContext } from "../../state/app-context.js";
import { nodeId } from "../../state/routes.js";
import { connectivityLook, relativeTime } from "../../state/session-labels.js";
import { StoreController } from "../../state/store-controller.js";
import { visibleText } from "../../util/visible-text.js";
import { LightElement } from "../base/light-element.js";

/** The add form's checkbox that stores a Node its check refused (AddNode `force`). */
const ADD_FORCE_LABEL = "Add even if the Node does not answer or refuses the token";

/**
 * The machines the Hub shows: each with its connectivity, when it was last heard from and its last
 * error; a form to add a Node (id, URL, node token) and a way to remove one (its sessions keep running
 * on it).
 */
export class SaNodeList extends LightElement {
  @consume({ context: appContext }) private app?: AppServices;
  @state() private error = "";
  @state() private busy = false;
  @state() private removing: Node | undefined;

  constructor() {
    super();
    new StoreController(this, () => (this.app ? [this.app.nodes, this.app.sessions] : []));
  }

  protected override render() {
    const nodes = this.app?.nodes.nodes ?? [];
    const loaded = this.app?.nodes.loaded ?? false;
    return html`<div class="nodes-page">
      <h1>Nodes</h1>
      <p class="muted intro">
        Each node is a machine whose tmux sessions this Hub shows. This machine is <strong>local</strong>; other machines run
        <code>staragent node</code> and are added here with their URL and node token.
      </p>
      ${
        !loaded
          ? html`<p role="status">Loading nodes…</p>`
          : html`<ul class="node-cards">
              ${nodes.map((n) => this.renderNode(n))}
            </ul>`
      }
      ${loaded && nodes.length <= 1 ? html`<p class="muted">No other machine yet: add one below to see its sessions here.</p>` : nothing}
      ${this.renderAddForm()} ${this.renderRemoveDialog()} <sa-node-edit></sa-node-edit>
    </div>`;
  }

  private renderNode(n: Node) {
    const id = nodeId(n.name);
    const look = connectivityLook(n.connectivity);
    const seen = n.lastSeenTime ? timestampDate(n.lastSeenTime) : undefined;
    const own = [...(this.app?.sessions.all() ?? [])].filter((s) => s.node === id);
    const sessions = own.length;
    return html`<li class="node-card">
      <div class="node-head">
        <h2>${id}${n.displayName && n.displayName !== id ? html` <span class="muted">· ${visibleText(n.displayName)}</span>` : nothing}</h2>
        <span class="connectivity tone-${look.tone}"><span aria-hidden="true">${look.glyph}</span>${look.word}</span>
      </div>
      <dl>
        <dt>Address</dt>
        <dd class="mono">${n.local ? "this machine" : n.url}</dd>
        <dt>Sessions</dt>
        <dd>${sessions}</dd>
        ${
          n.connectivity !== Connectivity.ONLINE || !n.local
            ? html`<dt>Last seen</dt>
                <dd>${seen ? html`<time datetime=${seen.toISOString()} title=${seen.toLocaleString()}>${relativeTime(seen)}</time>` : "never"}</dd>`
            : nothing
        }
        ${n.hostname ? html`<dt>Host</dt><dd>${n.hostname}</dd>` : nothing}
        ${n.version ? html`<dt>Version</dt><dd>${n.version}</dd>` : nothing}
        ${n.lastError ? html`<dt>Last error</dt><dd class="error-text">${n.lastError}</dd>` : nothing}
      </dl>
      <sa-plan-limits .sessions=${own}></sa-plan-limits>
      ${
        n.local
          ? nothing
          : html`<button class="edit-node" @click=${() => this.querySelector("sa-node-edit")?.open(n)} aria-label="Edit node ${id}">Edit…</button>
              <button class="remove-node" @click=${() => this.askRemove(n)} aria-label="Remove node ${id}">Remove…</button>`
      }
    </li>`;
  }

  private renderAddForm() {
    return html`<form class="add-node" @submit=${this.onAdd} novalidate aria-labelledby="add-node-title">
      <h2 id="add-node-title">Add a node</h2>
      <p class="muted">
        On the other machine run <code>staragent node --host &lt;its private address&gt;</code>; its node token is in
        <code>~/.staragent/node_token</code> there.
      </p>
      ${this.error ? html`<p class="form-error" role="alert">${this.error}</p>` : nothing}
      <div class="add-grid">
        <div class="field">
          <label for="node-id">Name <span class="hint">lowercase letters, digits and -</span></label>
          <input id="node-id" name="nodeId" type="text" autocomplete="off" spellcheck="false" autocapitalize="off" placeholder="build-box" required />
        </div>
        <div class="field">
          <label for="node-url">URL</label>
          <input id="node-url" name="url" type="url" autocomplete="off" spellcheck="false" placeholder="http://100.64.0.7:8081" required />
        </div>
        <div class="field">
          <label for="node-token">Node token</label>
          <input id="node-token" name="token" type="password" autocomplete="off" required />
        </div>
        <div class="field">
          <label for="node-display">Display name <span class="hint">optional</span></label>
          <input id="node-display" name="displayName" type="text" autocomplete="off" />
        </div>
      </div>
      <label class="node-force"><input type="checkbox" name="force" /> ${ADD_FORCE_LABEL}</label>
      <div class="actions">
        <button class="primary" type="submit" ?disabled=${this.busy}>${this.busy ? "Checking…" : "Add node"}</button>
      </div>
    </form>`;
  }

  private renderRemoveDialog() {
    const n = this.removing;
    return html`<dialog class="remove-dialog" aria-labelledby="remove-title" @close=${() => (this.removing = undefined)}>
      ${
        n
          ? html`<div class="dialog-body">
              <h2 id="remove-title">Remove node ${nodeId(n.name)}?</h2>
              <p>The Hub forgets this node and its token. Its sessions keep running on it; add it again to see them.</p>
              <div class="actions">
                <button type="button" @click=${() => this.querySelector<HTMLDialogElement>(".remove-dialog")?.close()}>Cancel</button>
                <button type="button" class="danger" @click=${() => void this.removeNode(n)}>Remove ${nodeId(n.name)}</button>
              </div>
            </div>`
          : nothing
      }
    </dialog>`;
  }

  private askRemove(n: Node): void {
    this.removing = n;
    void this.updateComplete.then(() => this.querySelector<HTMLDialogElement>(".remove-dialog")?.showModal());
  }

  private async removeNode(n: Node): Promise<void> {
    const app = this.app;
    if (!app) return;
    try {
      await app.hub.nodes.removeNode({ name: n.name });
      app.toast(`Removed node ${nodeId(n.name)}.`);
    } catch (err) {
      app.toast(`Could not remove ${nodeId(n.name)}: ${describeError(err)}`, "error");
    }
    this.querySelector<HTMLDialogElement>(".remove-dialog")?.close();
  }

  private readonly onAdd = (e: SubmitEvent) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    void this.add(form);
  };

  private async add(form: HTMLFormElement): Promise<void> {
    const app = this.app;
    if (!app) return;
    const data = new FormData(form);
    const value = (k: string) => String(data.get(k) ?? "").trim();
    const nodeIdValue = value("nodeId");
    const url = value("url");
    const token = value("token");
    if (nodeIdValue === "" || url === "" || token === "") {
      this.error = "Fill in the name, the URL and the node token.";
      return;
    }
    this.busy = true;
    this.error = "";
    try {
      await app.hub.nodes.addNode({
        nodeId: nodeIdValue,
        url,
        token,
        displayName: value("displayName"),
        force: data.get("force") !== null,
      });
      form.reset();
      app.toast(`Added node ${nodeIdValue}; the Hub is connecting to it.`);
    } catch (err) {
      this.error = describeNodeRefusal(err, ADD_FORCE_LABEL);
    } finally {
      this.busy = false;
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "sa-node-list": SaNodeList;
  }
}
