import { consume } from "@lit/context";
import { html, nothing } from "lit";
import { state } from "lit/decorators.js";
import type { AdoptableSession } from "../../../../gen/staragent/v1/session_pb.js";
import { describeError } from "../../api/errors.js";
import { type AppServices, appContext } from "../../state/app-context.js";
import { nodeId, sessionPath, splitSessionName } from "../../state/routes.js";
import { cliName } from "../../state/session-labels.js";
import { LightElement } from "../base/light-element.js";

/**
 * Lists agents already running in tmux that StarAgent does not manage yet (ListAdoptableSessions on
 * every node) and adopts the chosen ones: StarAgent then tracks them; their tmux sessions are not
 * touched.
 */
export class SaAdoptDialog extends LightElement {
  @consume({ context: appContext }) private app?: AppServices;
  @state() private items: AdoptableSession[] = [];
  @state() private unreachable: string[] = [];
  @state() private loading = false;
  @state() private error = "";
  @state() private adopting = "";

  /** Opens the dialog and scans every node. */
  open(): void {
    this.querySelector("dialog")?.showModal();
    void this.scan();
  }

  protected override render() {
    return html`<dialog aria-labelledby="adopt-title">
      <div class="dialog-body">
        <h2 id="adopt-title">Adopt running agents</h2>
        <p class="muted">
          Agents (Claude Code, Codex, opencode) already running in tmux sessions that StarAgent does not manage. Adopting
          one lets StarAgent show its status and chat; the tmux session itself stays as it is.
        </p>
        ${this.error ? html`<p class="form-error" role="alert">${this.error}</p>` : nothing}
        ${
          this.unreachable.length > 0
            ? html`<p class="muted">Not scanned (unreachable): ${this.unreachable.map(nodeId).join(", ")}.</p>`
            : nothing
        }
        <div class="adopt-list" aria-busy=${this.loading ? "true" : "false"}>
          ${
            this.loading
              ? html`<p role="status">Looking for agents in tmux…</p>`
              : this.items.length === 0 && !this.error
                ? html`<p class="empty">Nothing to adopt: no tmux session runs a supported agent that StarAgent does not manage yet.</p>`
                : html`<ul>
                    ${this.items.map((a) => this.renderItem(a))}
                  </ul>`
          }
        </div>
        <div class="actions">
          <button type="button" @click=${() => void this.scan()} ?disabled=${this.loading}>Scan again</button>
          <button type="button" class="primary" @click=${() => this.querySelector("dialog")?.close()}>Done</button>
        </div>
      </div>
    </dialog>`;
  }

  private renderItem(a: AdoptableSession) {
    const where = splitSessionName(a.name);
    return html`<li class="adopt-item">
      <div class="adopt-info">
        <strong>${a.tmuxSession}</strong>
        <span class="muted">on ${where?.node ?? "?"} · ${cliName(a.cli)}</span>
        <span class="mono muted adopt-cwd">${a.cwd}</span>
        <span class="mono muted adopt-cmd">${a.command}</span>
      </div>
      <button
        ?disabled=${this.adopting !== ""}
        aria-label="Adopt ${a.tmuxSession}"
        @click=${() => void this.adopt(a)}
      >
        ${this.adopting === a.name ? "Adopting…" : "Adopt"}
      </button>
    </li>`;
  }

  private async scan(): Promise<void> {
    const app = this.app;
    if (!app) return;
    this.loading = true;
    this.error = "";
    try {
      const res = await app.hub.sessions.listAdoptableSessions({ parent: "nodes/-" });
      this.items = res.adoptableSessions;
      this.unreachable = res.unreachable;
    } catch (err) {
      this.error = `Could not look for agents: ${describeError(err)}`;
    } finally {
      this.loading = false;
    }
  }

  private async adopt(a: AdoptableSession): Promise<void> {
    const app = this.app;
    if (!app) return;
    this.adopting = a.name;
    this.error = "";
    try {
      const res = await app.hub.sessions.adoptSession({ name: a.name });
      this.items = this.items.filter((i) => i.name !== a.name);
      app.toast(`Adopted ${a.tmuxSession}.`);
      const s = res.session;
      if (s && this.items.length === 0) {
        this.querySelector("dialog")?.close();
        app.navigate(sessionPath(s.node, s.tmuxSession));
      }
    } catch (err) {
      this.error = `Could not adopt ${a.tmuxSession}: ${describeError(err)}`;
    } finally {
      this.adopting = "";
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "sa-adopt-dialog": SaAdoptDialog;
  }
}
