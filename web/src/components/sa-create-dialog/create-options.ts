import { timestampDate } from "@bufbuild/protobuf/wkt";
import { html, nothing } from "lit";
import { Cli } from "../../../../gen/staragent/v1/session_pb.js";
import type { Conversation } from "../../../../gen/staragent/v1/session_service_pb.js";
import { CREATE_PRESETS, cliName, type PresetId } from "../../state/cli-table.js";
import { presetArgv } from "../../state/create-choices.js";
import { relativeTime } from "../../state/session-labels.js";
import { plainInput } from "../base/plain-input.js";
import type { ConversationPicker } from "./conversation-picker.js";

/** The node the session starts on, one of `nodes`. */
export function renderNodeField(nodes: readonly string[], node: string, onChange: (e: Event) => void) {
  return html`<div class="field">
    <label for="create-node">Node</label>
    <select id="create-node" @change=${onChange}>
      ${nodes.map((n) => html`<option value=${n} ?selected=${n === node}>${n}</option>`)}
    </select>
  </div>`;
}

/** The choice of what the session runs, from the create dialog. */
export interface RunsView {
  readonly preset: PresetId;
  /** The command line of one's own (preset "custom"). */
  readonly custom: string;
  readonly setPreset: (preset: PresetId) => void;
  readonly setCustom: (line: string) => void;
}

/** The presets, and for a command of one's own its field and the arguments it splits into. */
export function renderRuns(v: RunsView) {
  const argv = presetArgv(v.preset, v.custom);
  return html`<fieldset class="presets">
      <legend>Runs</legend>
      ${CREATE_PRESETS.map(
        (p) => html`<label class="preset"
          ><input type="radio" name="preset" .checked=${v.preset === p.id} @change=${() => v.setPreset(p.id)} />
          ${p.label}${p.id !== "custom" && p.argv.length > 0 ? html` <code>${p.argv.join(" ")}</code>` : nothing}</label
        >`,
      )}
    </fieldset>
    ${
      v.preset === "custom"
        ? html`<div class="field">
            <label for="create-command">Command <span class="hint">run directly, not by a shell: no pipes or variables</span></label>
            ${plainInput({ id: "create-command", mono: true, placeholder: "npm run dev", value: v.custom, onInput: v.setCustom })}
            ${
              "error" in argv
                ? html`<span class="hint error-text">${argv.error}</span>`
                : argv.argv.length > 0
                  ? html`<span class="hint">Arguments: ${argv.argv.map((a) => html`<code class="arg">${a}</code> `)}</span>`
                  : nothing
            }
          </div>`
        : nothing
    }`;
}

/** The worktree option's state and changes, from the create dialog. */
export interface WorktreeView {
  readonly worktree: boolean;
  readonly branch: string;
  readonly baseRef: string;
  /** What starting from nothing means here (the listed folder's branch, else HEAD). */
  readonly currentBranch: string;
  readonly setWorktree: (on: boolean) => void;
  readonly setBranch: (branch: string) => void;
  readonly setBaseRef: (ref: string) => void;
}

/** "On a new git worktree", and when ticked its branch and starting point. */
export function renderWorktree(v: WorktreeView) {
  return html`<fieldset class="option-group">
    <legend class="visually-hidden">Git worktree</legend>
    <label class="option"
      ><input
        type="checkbox"
        .checked=${v.worktree}
        @change=${(e: Event) => v.setWorktree((e.target as HTMLInputElement).checked)}
      />
      On a new git worktree <span class="hint">its own checkout and branch, beside the repository</span></label
    >
    ${
      v.worktree
        ? html`<div class="option-fields">
            <div class="field">
              <label for="create-branch">New branch</label>
              ${plainInput({ id: "create-branch", mono: true, placeholder: "fix-login-bug", value: v.branch, onInput: v.setBranch })}
            </div>
            <div class="field">
              <label for="create-base">Starting from <span class="hint">an existing branch, tag or commit; empty: the current one</span></label>
              ${plainInput({ id: "create-base", mono: true, placeholder: v.currentBranch, value: v.baseRef, onInput: v.setBaseRef })}
            </div>
          </div>`
        : nothing
    }
  </fieldset>`;
}

/** The resume option's state and changes, from the create dialog. */
export interface ResumeView {
  /** The CLI the chosen preset starts (undefined for a command of one's own). */
  readonly cli: Cli | undefined;
  readonly resume: boolean;
  readonly worktree: boolean;
  readonly picker: ConversationPicker;
  readonly setResume: (on: boolean) => void;
  /** The picker's search or choice changed: render again. */
  readonly changed: () => void;
}

/** "Resume a past … conversation", and when ticked the folder's conversations, searchable. */
export function renderResume(v: ResumeView) {
  const cli = v.cli;
  if (cli === undefined || cli === Cli.SHELL) return nothing;
  const picker = v.picker;
  const shown = picker.shown();
  return html`<fieldset class="option-group">
    <legend class="visually-hidden">Resume</legend>
    <label class="option"
      ><input
        type="checkbox"
        .checked=${v.resume}
        ?disabled=${v.worktree}
        @change=${(e: Event) => v.setResume((e.target as HTMLInputElement).checked)}
      />
      Resume a past ${cliName(cli)} conversation
      ${v.worktree ? html`<span class="hint">(a new worktree has none)</span>` : nothing}</label
    >
    ${
      v.resume
        ? html`<div class="option-fields">
            <input
              type="search"
              class="resume-search"
              aria-label="Search conversations"
              placeholder="Search their prompts"
              .value=${picker.query}
              @input=${(e: Event) => {
                picker.query = (e.target as HTMLInputElement).value;
                v.changed();
              }}
            />
            ${picker.error ? html`<p class="hint error-text" role="alert">${picker.error}</p>` : nothing}
            <div role="radiogroup" aria-label="Past conversations" aria-busy=${picker.busy ? "true" : "false"}>
            <ul class="conversation-list">
              ${shown.map((c) => renderConversation(c, v))}
              ${
                !picker.busy && shown.length === 0 && !picker.error
                  ? html`<li class="hint">${
                      picker.conversations.length === 0
                        ? `No past ${cliName(cli)} conversations in this folder.`
                        : "No conversation matches the search."
                    }</li>`
                  : nothing
              }
            </ul>
            </div>
          </div>`
        : nothing
    }
  </fieldset>`;
}

/** One past conversation to pick: its first and last prompt, when, how long, and where it is open. */
function renderConversation(c: Conversation, v: ResumeView) {
  const updated = c.updateTime ? relativeTime(timestampDate(c.updateTime)) : "";
  const turns = `${c.turnCount}${c.turnCountExact ? "" : "+"} turn${c.turnCount === 1 ? "" : "s"}`;
  const open = c.openInSession.split("/").at(-1) ?? "";
  return html`<li>
    <label class="conversation">
      <input
        type="radio"
        name="resume-conversation"
        .value=${c.id}
        .checked=${v.picker.chosen === c.id}
        @change=${() => {
          v.picker.chosen = c.id;
          v.changed();
        }}
      />
      <span class="conversation-text">
        <span class="conversation-first">${c.firstPrompt}</span>
        ${c.lastPrompt !== c.firstPrompt ? html`<span class="conversation-last hint">last: ${c.lastPrompt}</span>` : nothing}
        <span class="conversation-meta hint"
          >${updated} · ${turns}${open ? html` · <span class="open-in">open in ${open}</span>` : nothing}</span
        >
      </span>
    </label>
  </li>`;
}
