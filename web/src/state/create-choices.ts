import type { Cli, Session } from "../../../gen/staragent/v1/session_pb.js";
import { type ArgvResult, splitArgv } from "../util/argv.js";
import { CLI_TABLE, CREATE_PRESETS, type PresetId } from "./cli-table.js";
import { parseRecentFolders, type RecentFolder, rememberFolder } from "./recent-folders.js";

/** tmux session names StarAgent accepts (the Hub checks too). */
export const NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
/** The localStorage key of the create dialog's last choices. */
export const LAST_CHOICE_KEY = "staragent.create";

/** What the create dialog remembers between openings (each part only when it was readable). */
export interface LastChoices {
  readonly node?: string;
  readonly cwd?: string;
  readonly preset?: PresetId;
  readonly custom?: string;
  /** Folders started in, per node (recent-folders.ts). */
  readonly recent: RecentFolder[];
}

/** Where the choices are kept (localStorage; tests pass a Map-backed one). */
export type ChoiceStorage = Pick<Storage, "getItem" | "setItem">;

/** The last choices as stored; what is missing, unreadable or of the wrong kind is left out. */
export function readLastChoices(storage: ChoiceStorage | undefined): LastChoices {
  let last: Partial<Record<keyof LastChoices, unknown>> = {};
  try {
    last = (JSON.parse(storage?.getItem(LAST_CHOICE_KEY) ?? "{}") as typeof last | null) ?? {};
  } catch {
    // No saved choices.
  }
  const text = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);
  const preset = CREATE_PRESETS.find((p) => p.id === last.preset)?.id;
  return {
    ...(text(last.node) !== undefined && { node: text(last.node) }),
    ...(text(last.cwd) !== undefined && { cwd: text(last.cwd) }),
    ...(preset !== undefined && { preset }),
    ...(text(last.custom) !== undefined && { custom: text(last.custom) }),
    recent: parseRecentFolders(last.recent),
  };
}

/** Remembers the choices of a session just started; `cwd` goes first among its node's recent folders. */
export function rememberChoices(
  storage: ChoiceStorage | undefined,
  choices: { node: string; cwd: string; preset: PresetId; custom: string },
  recent: readonly RecentFolder[],
): void {
  try {
    storage?.setItem(
      LAST_CHOICE_KEY,
      JSON.stringify({
        ...choices,
        recent: rememberFolder(recent, choices.node, choices.cwd),
      }),
    );
  } catch {
    // Not remembered (storage full or refused); nothing else depends on it.
  }
}

/** The CLI a preset starts (undefined for a command of one's own). */
export function presetCli(id: PresetId): Cli | undefined {
  for (const [cli, info] of Object.entries(CLI_TABLE)) {
    if (info.presets.some((p: { id: string }) => p.id === id)) return Number(cli) as Cli;
  }
  return undefined;
}

/** A branch name suggested from a session name (the same letters; git accepts every one of them). */
export function suggestedBranch(sessionName: string): string {
  return sessionName.replace(/^[-_]+/, "");
}

/** What the page says once a session started; on a worktree, its branch and folder too. */
export function startedSentence(name: string, node: string, worktree?: { branch: string; path: string }): string {
  return worktree
    ? `Started ${name} on ${node}, on branch ${worktree.branch} in ${worktree.path}.`
    : `Started ${name} on ${node}.`;
}

/** The arguments a preset runs, or the custom command line split without a shell. */
export function presetArgv(preset: PresetId, custom: string): ArgvResult {
  if (preset !== "custom") return { argv: [...(CREATE_PRESETS.find((p) => p.id === preset)?.argv ?? [])] };
  return splitArgv(custom);
}

/** The create form as typed (trimmed by the check). */
export interface CreateForm {
  readonly name: string;
  readonly cwd: string;
  readonly preset: PresetId;
  readonly custom: string;
  readonly worktree: boolean;
  readonly branch: string;
  readonly resume: boolean;
  /** The conversation picked to resume ("" for none). */
  readonly resumeId: string;
}

/**
 * A form that can be sent (its command and folder), or the sentence saying what to fix and the field
 * to focus.
 */
export type CreateCheck =
  | { readonly argv: string[]; readonly cwd: string }
  | { readonly error: string; readonly focus?: string };

/**
 * Checks the form before it is sent, in the order of its fields, so the first thing to fix is named.
 * An empty folder is the node's home folder (`~`, expanded on that node), which the folder picker
 * shows first.
 */
export function checkCreate(form: CreateForm): CreateCheck {
  const cwd = form.cwd.trim() === "" ? "~" : form.cwd.trim();
  if (!NAME_PATTERN.test(form.name.trim())) {
    return { error: "Give the session a name of 1 to 64 letters, digits, '-' or '_'.", focus: "#create-name" };
  }
  if (!cwd.startsWith("/") && cwd !== "~" && !cwd.startsWith("~/")) {
    return {
      error: "Give the folder as an absolute path (starting with /), or as ~ or ~/folder on that node.",
      focus: "#create-cwd",
    };
  }
  const argv = presetArgv(form.preset, form.custom);
  if ("error" in argv) return { error: argv.error, focus: "#create-command" };
  if (form.preset === "custom" && argv.argv.length === 0) {
    return { error: "Type the command to run, or pick a preset.", focus: "#create-command" };
  }
  if (form.worktree && form.branch.trim() === "") {
    return { error: "Name the new branch for the worktree, or untick the worktree.", focus: "#create-branch" };
  }
  // Resume ticked for a command of one's own (the option hidden) still asks for the choice.
  const resumeId = form.resume && presetCli(form.preset) !== undefined ? form.resumeId : "";
  if (form.resume && resumeId === "") {
    return { error: "Pick the conversation to resume, or untick Resume." };
  }
  return { argv: argv.argv, cwd };
}

/** Suggestions for the folder field at the most. */
export const MAX_KNOWN_FOLDERS = 30;

/** The folders of a node's sessions, newest activity first, as suggestions for the folder field. */
export function knownFolders(sessions: Iterable<Session>, node: string): string[] {
  const seen = new Set<string>();
  const here = [...sessions]
    .filter((s) => s.node === node && s.cwd !== "")
    .sort((a, b) => Number((b.lastActivityTime?.seconds ?? 0n) - (a.lastActivityTime?.seconds ?? 0n)));
  for (const s of here) seen.add(s.cwd);
  return [...seen].slice(0, MAX_KNOWN_FOLDERS);
}
