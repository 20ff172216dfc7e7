import { consume } from "@lit/context";
import { initialState, Task, TaskStatus } from "@lit/task";
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
  /** Adopted since the last scan (no longer offered). */
  @state() private adopted = new Set<string>();
  /** The session of the last adoption started (the one its task's status is about). */
  private adopting: AdoptableSession | undefined;

  /** The scan of every node; a new scan aborts one still running. */
  private readonly scanTask = new Task(this, {
    task: async (_args: [], { signal }) => {
      const res = await this.app?.hub.sessions.listAdoptableSessions({ parent: "nodes/-" }, { signal });
      return { items: res?.adoptableSessions ?? [], unreachable: res?.unreachable ?? [] };
    },
    autoRun: false,
  });

  /**
   * The AdoptSession call for one session; run without one it returns to its initial state, which is
   * how a new scan clears the last adoption's error.
   */
  private readonly adoptTask = new Task(this, {
    task: async ([a]: readonly [AdoptableSession] | readonly []) => {
      if (!a || !this.app) return initialState;
      return { adoptable: a, session: (await this.app.hub.sessions.adoptSession({ name: a.name })).session };
    },
    autoRun: false,
    onComplete: ({ adoptable, session: s }) => {
      this.adopted = new Set([...this.adopted, adoptable.name]);
      this.app?.toast(`Adopted ${adoptable.tmuxSession}.`);
      if (s && this.items.length === 0) {
        this.querySelector("dialog")?.close();
        this.app?.navigate(sessionPath(s.node, s.tmuxSession));
      }
    },
  });

  /** Opens the dialog and scans every node. */
  open(): void {
    this.querySelector("dialog")?.showModal();
    this.scan();
  }

  /** What the last scan found, less what was adopted since. */
  private get items(): AdoptableSession[] {
    return (this.scanTask.value?.items ?? []).filter((a) => !this.adopted.has(a.name));
  }

  protected override render() {
    const loading = this.scanTask.status === TaskStatus.PENDING;
    const unreachable = this.scanTask.value?.unreachable ?? [];
    const error =
      this.scanTask.status === TaskStatus.ERROR
        ? `Could not look for agents: ${describeError(this.scanTask.error)}`
        : this.adoptTask.status === TaskStatus.ERROR
          ? `Could not adopt ${this.adopting?.tmuxSession}: ${describeError(this.adoptTask.error)}`
          : "";
    return html`<dialog aria-labelledby="adopt-title">
      <div class="dialog-body">
        <h2 id="adopt-title">Adopt running agents</h2>
        <p class="muted">
          Agents (Claude Code, Codex, opencode) already running in tmux sessions that StarAgent does not manage. Adopting
          one lets StarAgent show its status and chat; the tmux session itself stays as it is.
        </p>
        ${error ? html`<p class="form-error" role="alert">${error}</p>` : nothing}
        ${
          unreachable.length > 0
            ? html`<p class="muted">Not scanned (unreachable): ${unreachable.map(nodeId).join(", ")}.</p>`
            : nothing
        }
        <div class="adopt-list" aria-busy=${loading ? "true" : "false"}>
          ${
            loading
              ? html`<p role="status">Looking for agents in tmux…</p>`
              : this.items.length === 0 && !error
                ? html`<p class="empty">Nothing to adopt: no tmux session runs a supported agent that StarAgent does not manage yet.</p>`
                : html`<ul>
                    ${this.items.map((a) => this.renderItem(a))}
                  </ul>`
          }
        </div>
        <div class="actions">
          <button type="button" @click=${() => this.scan()} ?disabled=${loading}>Scan again</button>
          <button type="button" class="primary" @click=${() => this.querySelector("dialog")?.close()}>Done</button>
        </div>
      </div>
    </dialog>`;
  }

  private renderItem(a: AdoptableSession) {
    const where = splitSessionName(a.name);
    const pending = this.adoptTask.status === TaskStatus.PENDING;
    return html`<li class="adopt-item">
      <div class="adopt-info">
        <strong>${a.tmuxSession}</strong>
        <span class="muted">on ${where?.node ?? "?"} · ${cliName(a.cli)}</span>
        <span class="mono muted adopt-cwd">${a.cwd}</span>
        <span class="mono muted adopt-cmd">${a.command}</span>
      </div>
      <button
        ?disabled=${pending}
        aria-label="Adopt ${a.tmuxSession}"
        @click=${() => this.adopt(a)}
      >
        ${pending && this.adopting === a ? "Adopting…" : "Adopt"}
      </button>
    </li>`;
  }

  private scan(): void {
    this.adopted = new Set();
    void this.adoptTask.run([]);
    void this.scanTask.run([]);
  }

  private adopt(a: AdoptableSession): void {
    this.adopting = a;
    void this.adoptTask.run([a]);
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "sa-adopt-dialog": SaAdoptDialog;
  }
}
