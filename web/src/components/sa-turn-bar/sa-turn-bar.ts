import { consume } from "@lit/context";
import { html, nothing, type PropertyValues } from "lit";
import { property, state } from "lit/decorators.js";
import { type Session, SessionStatus, SessionType } from "../../../../gen/staragent/v1/session_pb.js";
import { describeError } from "../../api/errors.js";
import { type AppServices, appContext } from "../../state/app-context.js";
import { cliName } from "../../state/session-labels.js";
import { LightElement } from "../base/light-element.js";

/**
 * While a turn runs, says so above the composer (people asked "is it still doing something?") and
 * offers **Interrupt**: the owning machine types the CLI's own interrupt keys (InterruptSession), and
 * only on the person's click, never on its own. Renders nothing while the session is not working.
 */
export class SaTurnBar extends LightElement {
  /** The session shown (from the store). */
  @property({ attribute: false }) session: Session | undefined;

  @consume({ context: appContext }) private app?: AppServices;
  @state() private interrupting = false;

  protected override willUpdate(changed: PropertyValues<this>): void {
    // A new turn (or another session) can be interrupted again.
    if (changed.has("session") && this.session?.status !== SessionStatus.WORKING) this.interrupting = false;
  }

  protected override render() {
    const s = this.session;
    if (!s || s.status !== SessionStatus.WORKING || s.type === SessionType.SYSTEM) return nothing;
    return html`<div class="turn-bar" role="status">
      <span class="turn-dots" aria-hidden="true"><span></span><span></span><span></span></span>
      <span class="turn-text">${cliName(s.cli)} is working…</span>
      <button class="secondary turn-interrupt" ?disabled=${this.interrupting} @click=${() => this.interrupt(s)}
        title="Stops the running turn with ${cliName(s.cli)}'s own interrupt key">
        ${this.interrupting ? "Interrupting…" : "Interrupt"}
      </button>
    </div>`;
  }

  private async interrupt(s: Session): Promise<void> {
    const app = this.app;
    if (!app || this.interrupting) return;
    this.interrupting = true;
    try {
      await app.hub.sessions.interruptSession({ name: s.name });
    } catch (err) {
      this.interrupting = false;
      app.toast(`Could not interrupt ${s.tmuxSession}: ${describeError(err)}`, "error");
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "sa-turn-bar": SaTurnBar;
  }
}
