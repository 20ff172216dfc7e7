import { consume } from "@lit/context";
import { html, nothing } from "lit";
import { state } from "lit/decorators.js";
import { describeError } from "../../api/errors.js";
import { type AppServices, appContext } from "../../state/app-context.js";
import { nodeId, sessionPath } from "../../state/routes.js";
import { splitArgv } from "../../util/argv.js";
import { LightElement } from "../base/light-element.js";

/** The command presets; `argv` is run directly, never through a shell string. */
export const COMMAND_PRESETS = [
  { id: "claude", label: "Claude Code", argv: ["claude"] },
  { id: "codex", label: "Codex", argv: ["codex"] },
  { id: "codex-yolo", label: "Codex --yolo", argv: ["codex", "--yolo"] },
  { id: "opencode", label: "opencode", argv: ["opencode"] },
  { id: "shell", label: "A shell", argv: [] },
  { id: "custom", label: "Your own command", argv: [] },
] as const;

type PresetId = (typeof COMMAND_PRESETS)[number]["id"];

/** tmux session names StarAgent accepts (the Hub checks too). */
const NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
const LAST_CHOICE_KEY = "staragent.create";

/**
 * Starts a new session: on which node, its name, the folder it starts in, and what it runs (a preset
 * CLI, a shell, or a command line of your own, split into arguments without any shell). Errors from
 * the Hub are shown in the dialog, next to the fields.
 */
export class SaCreateDialog extends LightElement {
  @consume({ context: appContext }) private app?: AppServices;
  @state() private node = "local";
  @state() private name = "";
  @state() private cwd = "";
  @state() private preset: PresetId = "claude";
  @state() private custom = "";
  @state() private error = "";
  @state() private busy = false;

  /** Opens the dialog with the last choices. */
  open(): void {
    try {
      const last = JSON.parse(localStorage.getItem(LAST_CHOICE_KEY) ?? "{}") as Partial<{
        node: string;
        cwd: string;
        preset: PresetId;
        custom: string;
      }>;
      if (last.node) this.node = last.node;
      if (last.cwd) this.cwd = last.cwd;
      if (last.preset && COMMAND_PRESETS.some((p) => p.id === last.preset)) this.preset = last.preset;
      if (last.custom) this.custom = last.custom;
    } catch {
      // No saved choices.
    }
    const known = this.nodeIds();
    if (!known.includes(this.node)) this.node = known[0] ?? "local";
    this.name = "";
    this.error = "";
    this.querySelector("dialog")?.showModal();
    void this.updateComplete.then(() => this.querySelector<HTMLInputElement>("#create-name")?.focus());
  }

  protected override render() {
    const nodes = this.nodeIds();
    const cwds = this.knownFolders();
    const argv = this.argv();
    return html`<dialog aria-labelledby="create-title" @close=${() => (this.busy = false)}>
      <form class="dialog-body" @submit=${this.onSubmit} novalidate>
        <h2 id="create-title">New session</h2>
        ${this.error ? html`<p class="form-error" role="alert">${this.error}</p>` : nothing}
        <div class="field">
          <label for="create-node">Node</label>
          <select id="create-node" @change=${(e: Event) => (this.node = (e.target as HTMLSelectElement).value)}>
            ${nodes.map((n) => html`<option value=${n} ?selected=${n === this.node}>${n}</option>`)}
          </select>
        </div>
        <div class="field">
          <label for="create-name">Name <span class="hint">letters, digits, - and _; becomes the tmux session name</span></label>
          <input
            id="create-name"
            type="text"
            autocomplete="off"
            spellcheck="false"
            autocapitalize="off"
            placeholder="fix-login-bug"
            .value=${this.name}
            @input=${(e: Event) => (this.name = (e.target as HTMLInputElement).value)}
            aria-invalid=${this.name !== "" && !NAME_PATTERN.test(this.name) ? "true" : "false"}
          />
        </div>
        <div class="field">
          <label for="create-cwd">Folder <span class="hint">an absolute path on that node</span></label>
          <input
            id="create-cwd"
            type="text"
            list="create-cwds"
            autocomplete="off"
            spellcheck="false"
            autocapitalize="off"
            placeholder="/home/you/project"
            .value=${this.cwd}
            @input=${(e: Event) => (this.cwd = (e.target as HTMLInputElement).value)}
          />
          <datalist id="create-cwds">${cwds.map((c) => html`<option value=${c}></option>`)}</datalist>
        </div>
        <fieldset class="presets">
          <legend>Runs</legend>
          ${COMMAND_PRESETS.map(
            (p) => html`<label class="preset"
              ><input type="radio" name="preset" .checked=${this.preset === p.id} @change=${() => (this.preset = p.id)} />
              ${p.label}${p.id !== "custom" && p.argv.length > 0 ? html` <code>${p.argv.join(" ")}</code>` : nothing}</label
            >`,
          )}
        </fieldset>
        ${
          this.preset === "custom"
            ? html`<div class="field">
                <label for="create-command">Command <span class="hint">run directly, not by a shell: no pipes or variables</span></label>
                <input
                  id="create-command"
                  type="text"
                  class="mono"
                  autocomplete="off"
                  spellcheck="false"
                  autocapitalize="off"
                  placeholder="npm run dev"
                  .value=${this.custom}
                  @input=${(e: Event) => (this.custom = (e.target as HTMLInputElement).value)}
                />
                ${
                  "error" in argv
                    ? html`<span class="hint error-text">${argv.error}</span>`
                    : argv.argv.length > 0
                      ? html`<span class="hint">Arguments: ${argv.argv.map((a) => html`<code class="arg">${a}</code> `)}</span>`
                      : nothing
                }
              </div>`
            : nothing
        }
        <div class="actions">
          <button type="button" @click=${() => this.close()}>Cancel</button>
          <button class="primary" type="submit" ?disabled=${this.busy}>${this.busy ? "Starting…" : "Start session"}</button>
        </div>
      </form>
    </dialog>`;
  }

  private nodeIds(): string[] {
    const ids = (this.app?.nodes.nodes ?? []).map((n) => nodeId(n.name));
    return ids.length > 0 ? ids : ["local"];
  }

  /** Folders of the node's sessions, newest activity first, as suggestions. */
  private knownFolders(): string[] {
    const seen = new Set<string>();
    const sessions = [...(this.app?.sessions.all() ?? [])]
      .filter((s) => s.node === this.node && s.cwd !== "")
      .sort((a, b) => Number((b.lastActivityTime?.seconds ?? 0n) - (a.lastActivityTime?.seconds ?? 0n)));
    for (const s of sessions) seen.add(s.cwd);
    return [...seen].slice(0, 30);
  }

  private argv(): { argv: string[] } | { error: string } {
    if (this.preset !== "custom") {
      return { argv: [...(COMMAND_PRESETS.find((p) => p.id === this.preset)?.argv ?? [])] };
    }
    return splitArgv(this.custom);
  }

  private readonly onSubmit = (e: SubmitEvent) => {
    e.preventDefault();
    void this.create();
  };

  private async create(): Promise<void> {
    const app = this.app;
    if (!app) return;
    const name = this.name.trim();
    const cwd = this.cwd.trim();
    if (!NAME_PATTERN.test(name)) {
      this.fail("Give the session a name of 1 to 64 letters, digits, '-' or '_'.", "#create-name");
      return;
    }
    if (!cwd.startsWith("/")) {
      this.fail("Give the folder as an absolute path (starting with /).", "#create-cwd");
      return;
    }
    const argv = this.argv();
    if ("error" in argv) {
      this.fail(argv.error, "#create-command");
      return;
    }
    if (this.preset === "custom" && argv.argv.length === 0) {
      this.fail("Type the command to run, or pick a preset.", "#create-command");
      return;
    }
    this.busy = true;
    this.error = "";
    try {
      const res = await app.hub.sessions.createSession({
        parent: `nodes/${this.node}`,
        sessionId: name,
        cwd,
        command: argv.argv,
      });
      try {
        localStorage.setItem(
          LAST_CHOICE_KEY,
          JSON.stringify({ node: this.node, cwd, preset: this.preset, custom: this.custom }),
        );
      } catch {
        // Not remembered; nothing else depends on it.
      }
      this.close();
      app.toast(`Started ${name} on ${this.node}.`);
      const s = res.session;
      app.navigate(sessionPath(s?.node ?? this.node, s?.tmuxSession ?? name));
    } catch (err) {
      this.fail(describeError(err));
    } finally {
      this.busy = false;
    }
  }

  private fail(message: string, focus?: string): void {
    this.error = message;
    if (focus) void this.updateComplete.then(() => this.querySelector<HTMLElement>(focus)?.focus());
  }

  private close(): void {
    this.querySelector("dialog")?.close();
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "sa-create-dialog": SaCreateDialog;
  }
}
