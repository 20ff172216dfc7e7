import { consume } from "@lit/context";
import { html, nothing, type PropertyValues } from "lit";
import { state } from "lit/decorators.js";
import { describeError } from "../../api/errors.js";
import { type AppServices, appContext } from "../../state/app-context.js";
import type { PresetId } from "../../state/cli-table.js";
import {
  checkCreate,
  knownFolders,
  NAME_PATTERN,
  presetCli,
  readLastChoices,
  rememberChoices,
  startedSentence,
  suggestedBranch,
} from "../../state/create-choices.js";
import { browserStorage } from "../../state/preferences.js";
import { type RecentFolder, recentOn } from "../../state/recent-folders.js";
import { nodeId, sessionPath } from "../../state/routes.js";
import { LightElement } from "../base/light-element.js";
import { plainInput } from "../base/plain-input.js";
import { ConversationPicker } from "./conversation-picker.js";
import { renderNodeField, renderResume, renderRuns, renderWorktree } from "./create-options.js";
import { FolderBrowser } from "./folder-browser.js";
import { type FolderPickerView, renderFolderPicker, renderRecentFolders } from "./folder-picker-view.js";

/** Quiet time after the folder or CLI changed before the resume list is asked for again. */
const RESUME_LIST_DELAY_MS = 300;

/**
 * Starts a new session: on which node, its name, the folder it starts in (typed, picked from recent
 * folders, or browsed on that node, where a new folder can be made), and what it runs (a preset CLI,
 * a shell, or a command line of your own, split into arguments without any shell). It can start the
 * session on a new git worktree and branch (suggested from the name), or resume one of the folder's
 * past conversations of the chosen CLI (newest first, searchable). Errors from the Hub are shown in the
 * dialog, next to the fields.
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
  @state() private worktree = false;
  @state() private branch = "";
  /** True once the branch was typed: it no longer follows the name. */
  @state() private branchEdited = false;
  @state() private baseRef = "";
  @state() private resume = false;
  @state() private newFolder = "";
  @state() private recent: RecentFolder[] = [];
  private readonly folders = new FolderBrowser(this, () => this.app?.hub);
  private readonly conversations = new ConversationPicker(this, () => this.app?.hub);
  private resumeTimer: ReturnType<typeof setTimeout> | undefined;

  /** Opens the dialog with the last choices. */
  open(): void {
    const last = readLastChoices(browserStorage());
    if (last.node) this.node = last.node;
    if (last.cwd) this.cwd = last.cwd;
    if (last.preset) this.preset = last.preset;
    if (last.custom) this.custom = last.custom;
    if (last.recent.length > 0) this.recent = last.recent;
    const known = this.nodeIds();
    if (!known.includes(this.node)) this.node = known[0] ?? "local";
    this.name = "";
    this.error = "";
    this.worktree = false;
    this.branch = "";
    this.branchEdited = false;
    this.baseRef = "";
    this.resume = false;
    this.newFolder = "";
    this.folders.reset();
    this.conversations.reset();
    void this.folders.list(this.node, this.cwd.startsWith("/") ? this.cwd : "");
    this.querySelector("dialog")?.showModal();
    void this.updateComplete.then(() => this.querySelector<HTMLInputElement>("#create-name")?.focus());
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    clearTimeout(this.resumeTimer);
  }

  protected override updated(changed: PropertyValues): void {
    // A refused start's error is about the folder it named: another folder (typed, picked or made) clears it.
    if (changed.has("cwd") && changed.get("cwd") !== undefined && this.error !== "") this.error = "";
    const keys = ["resume", "node", "cwd", "preset"] as const;
    if (!this.resume || !keys.some((k) => changed.has(k))) return;
    const cli = presetCli(this.preset);
    if (cli === undefined) return;
    clearTimeout(this.resumeTimer);
    const cwd = this.cwd.trim();
    const folder = cwd.startsWith("/") ? cwd.replace(/(.)\/+$/, "$1") : "";
    this.resumeTimer = setTimeout(
      () => void this.conversations.load(this.node, folder, cli),
      changed.has("resume") ? 0 : RESUME_LIST_DELAY_MS,
    );
  }

  protected override render() {
    const nodes = this.nodeIds();
    const cwds = knownFolders(this.app?.sessions.all() ?? [], this.node);
    const picker = this.pickerView();
    return html`<dialog aria-labelledby="create-title" @close=${() => (this.busy = false)}>
      <form class="dialog-body" @submit=${this.onSubmit} novalidate>
        <h2 id="create-title">New session</h2>
        ${this.error ? html`<p class="form-error" role="alert">${this.error}</p>` : nothing}
        ${renderNodeField(nodes, this.node, this.onNodeChange)}
        <div class="field">
          <label for="create-name">Name <span class="hint">letters, digits, - and _; becomes the tmux session name</span></label>
          ${plainInput({
            id: "create-name",
            placeholder: "fix-login-bug",
            value: this.name,
            onInput: (name) => this.setName(name),
            invalid: this.name !== "" && !NAME_PATTERN.test(this.name),
          })}
        </div>
        <div class="field">
          <label for="create-cwd">Folder <span class="hint">an absolute path on that node, or ~/folder; empty for the home folder</span></label>
          ${plainInput({
            id: "create-cwd",
            list: "create-cwds",
            placeholder: "/home/you/project",
            value: this.cwd,
            onInput: (cwd) => this.setCwd(cwd),
          })}
          <datalist id="create-cwds">${cwds.map((c) => html`<option value=${c}></option>`)}</datalist>
          ${renderRecentFolders(picker)}
          ${renderFolderPicker(picker)}
        </div>
        ${renderRuns({
          preset: this.preset,
          custom: this.custom,
          setPreset: (preset) => (this.preset = preset),
          setCustom: (custom) => (this.custom = custom),
        })}
        ${renderWorktree({
          worktree: this.worktree,
          branch: this.branch,
          baseRef: this.baseRef,
          currentBranch: this.folders.listing?.directory?.branch || "HEAD",
          setWorktree: (on) => {
            this.worktree = on;
            if (on) this.resume = false;
          },
          setBranch: (branch) => {
            this.branch = branch;
            this.branchEdited = true;
          },
          setBaseRef: (ref) => (this.baseRef = ref),
        })}
        ${renderResume({
          cli: presetCli(this.preset),
          resume: this.resume,
          worktree: this.worktree,
          picker: this.conversations,
          setResume: (on) => (this.resume = on),
          changed: () => this.requestUpdate(),
        })}
        <div class="actions">
          <button type="button" @click=${() => this.close()}>Cancel</button>
          <button class="primary" type="submit" ?disabled=${this.busy}>${this.busy ? "Starting…" : "Start session"}</button>
        </div>
      </form>
    </dialog>`;
  }

  /** What the folder picker shows and does. */
  private pickerView(): FolderPickerView {
    return {
      node: this.node,
      folders: this.folders,
      recent: recentOn(this.recent, this.node),
      newFolder: this.newFolder,
      setNewFolder: (name) => (this.newFolder = name),
      enter: (path) => this.enter(path),
      makeFolder: () => void this.makeFolder(),
    };
  }

  private readonly onNodeChange = (e: Event) => {
    this.node = (e.target as HTMLSelectElement).value;
    this.folders.reset();
    this.conversations.reset();
    void this.folders.list(this.node, "");
  };

  private setName(name: string): void {
    this.name = name;
    if (!this.branchEdited) this.branch = suggestedBranch(name);
  }

  private setCwd(value: string): void {
    this.cwd = value;
    this.folders.typed(this.node, value.trim());
  }

  /** Picks folder `path`: it becomes the folder field's value and the picker lists it. */
  private enter(path: string): void {
    this.cwd = path;
    void this.folders.list(this.node, path);
  }

  private async makeFolder(): Promise<void> {
    const made = await this.folders.create(this.node, this.newFolder);
    if (made === undefined) return;
    this.newFolder = "";
    this.enter(made);
  }

  private nodeIds(): string[] {
    const ids = (this.app?.nodes.nodes ?? []).map((n) => nodeId(n.name));
    return ids.length > 0 ? ids : ["local"];
  }

  private readonly onSubmit = (e: SubmitEvent) => {
    e.preventDefault();
    void this.create();
  };

  private async create(): Promise<void> {
    const app = this.app;
    if (!app) return;
    const checked = checkCreate({
      name: this.name,
      cwd: this.cwd,
      preset: this.preset,
      custom: this.custom,
      worktree: this.worktree,
      branch: this.branch,
      resume: this.resume,
      resumeId: this.conversations.chosen,
    });
    if ("error" in checked) {
      this.fail(checked.error, checked.focus);
      return;
    }
    const name = this.name.trim();
    const cwd = checked.cwd;
    const cli = presetCli(this.preset);
    const resumeId = this.resume && cli !== undefined ? this.conversations.chosen : "";
    this.busy = true;
    this.error = "";
    try {
      const res = await app.hub.sessions.createSession({
        parent: `nodes/${this.node}`,
        sessionId: name,
        cwd,
        command: checked.argv,
        worktree: this.worktree ? { branch: this.branch.trim(), baseRef: this.baseRef.trim() } : undefined,
        resume: resumeId !== "" && cli !== undefined ? { cli, conversationId: resumeId } : undefined,
      });
      rememberChoices(
        browserStorage(),
        { node: this.node, cwd, preset: this.preset, custom: this.custom },
        this.recent,
      );
      this.close();
      const s = res.session;
      app.toast(startedSentence(name, this.node, s?.worktree));
      app.navigate(sessionPath(s?.node ?? this.node, s?.tmuxSession ?? name));
    } catch (err) {
      this.fail(describeError(err));
    } finally {
      this.busy = false;
    }
  }

  /**
   * Shows why the form cannot be sent, and focuses the field to fix. The sentence stands at the top of
   * the form, out of sight on a phone scrolled down to the Create button: it is scrolled into view.
   */
  private fail(message: string, focus?: string): void {
    this.error = message;
    void this.updateComplete.then(() => {
      if (focus) this.querySelector<HTMLElement>(focus)?.focus();
      this.querySelector(".form-error")?.scrollIntoView({ block: "nearest" });
    });
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
