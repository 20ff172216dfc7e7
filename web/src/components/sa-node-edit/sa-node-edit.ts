import { consume } from "@lit/context";
import { initialState, Task, TaskStatus } from "@lit/task";
import { html, nothing } from "lit";
import { state } from "lit/decorators.js";
import type { Node } from "../../../../gen/staragent/v1/node_service_pb.js";
import { describeNodeRefusal } from "../../api/errors.js";
import { type AppServices, appContext } from "../../state/app-context.js";
import { nodeId } from "../../state/routes.js";
import { LightElement } from "../base/light-element.js";

/** The dialog's checkbox that saves a change its check refused (UpdateNode `force`). */
const SAVE_FORCE_LABEL = "Save even if the Node does not answer or refuses the token";

/**
 * Changes a Node's URL, node token or display name in place (UpdateNode): a Node whose token was
 * regenerated or that moved keeps its name and its sessions, where removing and adding it again lost
 * them from view meanwhile. The Hub checks the change as it checks a new Node; a refusal is shown in
 * the dialog, and "save even if it does not answer" stores it all the same.
 */
export class SaNodeEdit extends LightElement {
  @consume({ context: appContext }) private app?: AppServices;
  @state() private node: Node | undefined;
  /** What the form lacks ("" when nothing): said before anything is sent. */
  @state() private invalid = "";

  /**
   * The UpdateNode call with the form's values: its status is what the dialog shows (Checking…, the
   * Hub's refusal). Run without a Node it returns to its initial state, which is how opening clears it.
   */
  private readonly saveTask = new Task(this, {
    task: async ([n, data]: readonly [Node, FormData] | readonly []) => {
      if (!n || !data || !this.app) return initialState;
      const value = (k: string) => String(data.get(k) ?? "").trim();
      const url = value("url");
      await this.app.hub.nodes.updateNode({
        name: n.name,
        url: url === n.url ? "" : url,
        token: value("token"),
        displayName: value("displayName"),
        force: data.get("force") !== null,
      });
      return n;
    },
    autoRun: false,
    onComplete: (n) => {
      this.querySelector("dialog")?.close();
      this.app?.toast(`Saved node ${nodeId(n.name)}.`);
    },
  });

  /** Opens the dialog for a remote Node. */
  open(node: Node): void {
    if (node.local) return;
    this.node = node;
    this.invalid = "";
    void this.saveTask.run([]);
    void this.updateComplete.then(() => {
      const form = this.querySelector("form");
      form?.reset();
      const url = this.querySelector<HTMLInputElement>("#edit-node-url");
      if (url) url.value = node.url;
      this.querySelector("dialog")?.showModal();
      url?.focus();
    });
  }

  protected override render() {
    const n = this.node;
    const id = n ? nodeId(n.name) : "";
    const busy = this.saveTask.status === TaskStatus.PENDING;
    const error =
      this.invalid ||
      (this.saveTask.status === TaskStatus.ERROR ? describeNodeRefusal(this.saveTask.error, SAVE_FORCE_LABEL) : "");
    return html`<dialog class="node-edit-dialog" aria-labelledby="node-edit-title" @close=${() => (this.node = undefined)}>
      ${
        n
          ? html`<form class="dialog-body" @submit=${this.onSubmit} novalidate>
              <h2 id="node-edit-title">Edit node ${id}</h2>
              <p class="muted">Leave the token empty to keep the one the Hub has. The Hub checks the Node before saving.</p>
              ${error ? html`<p class="form-error" role="alert">${error}</p>` : nothing}
              <div class="field">
                <label for="edit-node-url">URL</label>
                <input id="edit-node-url" name="url" type="url" autocomplete="off" spellcheck="false" required />
              </div>
              <div class="field">
                <label for="edit-node-token">New node token <span class="hint">optional</span></label>
                <input id="edit-node-token" name="token" type="password" autocomplete="off" />
              </div>
              <div class="field">
                <label for="edit-node-display">Display name <span class="hint">optional</span></label>
                <input id="edit-node-display" name="displayName" type="text" autocomplete="off" .value=${n.displayName === id ? "" : n.displayName} />
              </div>
              <label class="node-force"><input type="checkbox" name="force" /> ${SAVE_FORCE_LABEL}</label>
              <div class="actions">
                <button type="button" @click=${() => this.querySelector("dialog")?.close()}>Cancel</button>
                <button class="primary" type="submit" ?disabled=${busy}>${busy ? "Checking…" : "Save"}</button>
              </div>
            </form>`
          : nothing
      }
    </dialog>`;
  }

  private readonly onSubmit = (e: SubmitEvent) => {
    e.preventDefault();
    this.save(e.currentTarget as HTMLFormElement);
  };

  private save(form: HTMLFormElement): void {
    const n = this.node;
    if (!n) return;
    const data = new FormData(form);
    this.invalid = String(data.get("url") ?? "").trim() === "" ? "Give the Node's URL." : "";
    if (this.invalid === "") void this.saveTask.run([n, data]);
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "sa-node-edit": SaNodeEdit;
  }
}
