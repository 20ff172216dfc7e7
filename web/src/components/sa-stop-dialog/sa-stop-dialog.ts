import { consume } from "@lit/context";
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
 * so. System sessions are never offered.
 */
export class SaStopDialog extends LightElement {
  @consume({ context: appContext }) private app?: AppServices;
  @state() private session: Session | undefined;
  @state() private acknowledged = false;
  @state() private busy = false;
  @state() private error = "";

  /** Opens the dialog for a session. */
  open(session: Session): void {
    if (stopPolicy(session) === "never") return;
    this.session = session;
    this.acknowledged = false;
    this.error = "";
    this.querySelector("dialog")?.showModal();
    void this.updateComplete.then(() => this.querySelector<HTMLButtonElement>(".stop-cancel")?.focus());
  }

  protected override render() {
    const s = this.session;
    const force = s ? stopPolicy(s) === "force" : false;
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
              ${this.error ? html`<p class="form-error" role="alert">${this.error}</p>` : nothing}
              <div class="actions">
                <button class="stop-cancel" type="button" @click=${() => this.close()}>Cancel</button>
                <button class="danger" type="button" ?disabled=${this.busy || (force && !this.acknowledged)} @click=${() => void this.stop()}>
                  ${this.busy ? "Stopping…" : `Stop ${s.tmuxSession}`}
                </button>
              </div>
            </div>`
          : nothing
      }
    </dialog>`;
  }

  private async stop(): Promise<void> {
    const s = this.session;
    const app = this.app;
    if (!s || !app) return;
    const force = stopPolicy(s) === "force";
    if (force && !this.acknowledged) return;
    this.busy = true;
    this.error = "";
    try {
      await app.hub.sessions.stopSession({ name: s.name, force });
      this.close();
      app.toast(`Stopped ${s.tmuxSession}.`);
      const here = splitSessionName(s.name);
      if (
        here &&
        location.pathname.startsWith(`/sessions/${encodeURIComponent(here.node)}/${encodeURIComponent(here.id)}`)
      ) {
        app.navigate("/");
      }
    } catch (err) {
      this.error = describeError(err);
    } finally {
      this.busy = false;
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
