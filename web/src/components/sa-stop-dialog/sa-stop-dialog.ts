import { consume } from "@lit/context";
import { initialState, Task, TaskStatus } from "@lit/task";
import { html, nothing } from "lit";
import { state } from "lit/decorators.js";
import { type Session, SessionOrigin } from "../../../../gen/staragent/v1/session_pb.js";
import { describeError } from "../../api/errors.js";
import { type AppServices, appContext } from "../../state/app-context.js";
import { splitSessionName } from "../../state/routes.js";
import { stopPolicy } from "../../state/session-labels.js";
import { LightElement } from "../base/light-element.js";

/**
 * Asks before stopping a session (which kills its tmux session and the program in it). A session
 * StarAgent did not start (adopted, or not managed) needs a deliberate extra step: a box to tick saying
 * so. System sessions are never offered. A session on a worktree StarAgent made offers to remove it too;
 * the owning machine refuses (and says what would be lost) when it holds uncommitted work or commits on
 * no other branch, and the session then keeps running.
 */
export class SaStopDialog extends LightElement {
  @consume({ context: appContext }) private app?: AppServices;
  @state() private session: Session | undefined;
  @state() private acknowledged = false;

  /**
   * The StopSession call: its status is what the dialog shows (Stopping…, the error). Run without a
   * session it returns to its initial state, which is how opening the dialog clears the last error.
   */
  private readonly stopTask = new Task(this, {
    task: async ([s, force, removeWorktree]: readonly [Session, boolean, boolean] | readonly []) => {
      if (!s || !this.app) return initialState;
      await this.app.hub.sessions.stopSession({ name: s.name, force, removeWorktree });
      return s;
    },
    autoRun: false,
    onComplete: (s) => this.stopped(s),
  });
  /** Also remove the git worktree StarAgent made for the session (refused when that would lose work). */
  @state() private removeWorktree = false;

  /** Opens the dialog for a session. */
  open(session: Session): void {
    if (stopPolicy(session) === "never") return;
    this.session = session;
    this.acknowledged = false;
    this.removeWorktree = false;
    void this.stopTask.run([]);
    this.querySelector("dialog")?.showModal();
    void this.updateComplete.then(() => this.querySelector<HTMLButtonElement>(".stop-cancel")?.focus());
  }

  protected override render() {
    const s = this.session;
    const force = s ? stopPolicy(s) === "force" : false;
    const busy = this.stopTask.status === TaskStatus.PENDING;
    const error = this.stopTask.status === TaskStatus.ERROR ? describeError(this.stopTask.error) : "";
    return html`<dialog aria-labelledby="stop-title" aria-describedby="stop-what">
      ${
        s
          ? html`<div class="dialog-body">
              <h2 id="stop-title">Stop ${s.tmuxSession}?</h2>
              <p id="stop-what">
                This ends the tmux session <code>${s.tmuxSession}</code> on node ${s.node} and the program running in it
                ${s.command ? html`(<code>${s.command}</code>)` : nothing}. Anything unsaved in it is lost.
              </p>
              ${
                force
                  ? html`<label class="stop-ack"
                      ><input
                        type="checkbox"
                        .checked=${this.acknowledged}
                        @change=${(e: Event) => (this.acknowledged = (e.target as HTMLInputElement).checked)}
                      />
                      I understand that StarAgent did not start this session (it was
                      ${s.origin === SessionOrigin.ADOPTED ? "adopted" : "already running"}) and that stopping it ends it
                      for good.</label
                    >`
                  : nothing
              }
              ${
                s.worktree
                  ? html`<label class="stop-worktree"
                      ><input
                        type="checkbox"
                        .checked=${this.removeWorktree}
                        @change=${(e: Event) => (this.removeWorktree = (e.target as HTMLInputElement).checked)}
                      />
                      Also remove its git worktree <code>${s.worktree.path}</code>, only if that loses nothing (branch
                      <code>${s.worktree.branch}</code> is kept)</label
                    >`
                  : nothing
              }
              ${error ? html`<p class="form-error" role="alert">${error}</p>` : nothing}
              <div class="actions">
                <button class="stop-cancel" type="button" @click=${() => this.close()}>Cancel</button>
                <button class="danger" type="button" ?disabled=${busy || (force && !this.acknowledged)} @click=${() => this.stop()}>
                  ${busy ? "Stopping…" : `Stop ${s.tmuxSession}`}
                </button>
              </div>
            </div>`
          : nothing
      }
    </dialog>`;
  }

  private stop(): void {
    const s = this.session;
    if (!s) return;
    const force = stopPolicy(s) === "force";
    if (force && !this.acknowledged) return;
    void this.stopTask.run([s, force, this.removeWorktree && !!s.worktree]);
  }

  /** The session is stopped: close, say so, and leave its page if it is the one shown. */
  private stopped(s: Session): void {
    this.close();
    this.app?.toast(`Stopped ${s.tmuxSession}.`);
    const here = splitSessionName(s.name);
    if (
      here &&
      location.pathname.startsWith(`/sessions/${encodeURIComponent(here.node)}/${encodeURIComponent(here.id)}`)
    ) {
      this.app?.navigate("/");
    }
  }

  private close(): void {
    this.querySelector("dialog")?.close();
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "sa-stop-dialog": SaStopDialog;
  }
}
