import { lstat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Logger } from "../../common/log.js";
import { PathWatcher } from "../status/path-watcher.js";
import { findRepository, type RepositoryPlace, readStatus } from "./changes.js";
import { type GitRun, GitShell } from "./git.js";

/** A change seen by a file watch is looked at after this quiet time, so a burst of writes costs one status. */
export const WORKSPACE_SETTLE_MS = 300;
/**
 * Each folder is looked at again this long after its last look even without an event, by a timer of its
 * own (a write in a folder no watch covers — the watches are not recursive —, a `git init` in a folder
 * that was none): one status per folder per this interval, not per poll. Below a minute, so such an
 * edit shows within 60 s with the status's own time to spare.
 */
export const WORKSPACE_RECHECK_MS = 50_000;
/** Folders of changed files watched per session folder (besides the folder itself and the git folder). */
const MAX_WATCHED_FOLDERS = 32;

/** What a session's row shows of its workspace. */
export interface WorkspaceSummary {
  /** Changed files under the folder; undefined outside a repository and until the first status. */
  readonly changedFiles: number | undefined;
  readonly branch: string;
}

interface FolderState {
  /** The repository, null when the folder is in none, undefined until found. */
  place: RepositoryPlace | null | undefined;
  summary: WorkspaceSummary;
  dirty: boolean;
  running: boolean;
  timer: NodeJS.Timeout | undefined;
  /** The look WORKSPACE_RECHECK_MS after the last one, armed after every look. */
  recheck: NodeJS.Timeout | undefined;
  watcher: PathWatcher;
}

const NONE: WorkspaceSummary = { changedFiles: undefined, branch: "" };

/** The tracker's timing; tests shorten it (defaults: WORKSPACE_SETTLE_MS, WORKSPACE_RECHECK_MS). */
export interface WorkspaceTiming {
  readonly settleMs?: number;
  readonly recheckMs?: number;
}

/**
 * Keeps each session folder's changed-file count and branch (Session.changed_files, branch) without a
 * `git status` per session per poll: one status per folder, run again only when a file watch on its
 * git folder (index, HEAD), the folder itself or the folders of its changed files fires, and
 * WORKSPACE_RECHECK_MS after its last look otherwise. Sessions share their folder's result. `onChange` is called when a result
 * changed, so the model is read again and watchers hear of it.
 */
export class WorkspaceTracker {
  private readonly folders = new Map<string, FolderState>();
  private closed = false;
  private readonly settleMs: number;
  private readonly recheckMs: number;
  /** The statuses run every WORKSPACE_RECHECK_MS per folder: through one long-lived shell, not a spawn each. */
  private readonly git = new GitShell();

  constructor(
    private readonly onChange: () => void,
    private readonly log: Logger,
    timing: WorkspaceTiming = {},
  ) {
    this.settleMs = timing.settleMs ?? WORKSPACE_SETTLE_MS;
    this.recheckMs = timing.recheckMs ?? WORKSPACE_RECHECK_MS;
  }

  /** The summary of a session folder as known now; starts a look in the background when it is stale. */
  lookup(cwd: string): WorkspaceSummary {
    if (this.closed || cwd === "") return NONE;
    let state = this.folders.get(cwd);
    if (!state) {
      state = {
        place: undefined,
        summary: NONE,
        dirty: true,
        running: false,
        timer: undefined,
        recheck: undefined,
        watcher: new PathWatcher(() => this.touched(cwd)),
      };
      this.folders.set(cwd, state);
      this.schedule(cwd, state, 0);
    }
    return state.summary;
  }

  /** Forgets folders no session is in any more (their watches closed). */
  retain(cwds: ReadonlySet<string>): void {
    for (const [cwd, state] of this.folders) {
      if (cwds.has(cwd)) continue;
      this.drop(state);
      this.folders.delete(cwd);
    }
  }

  /** Closes every watch and timer; lookups answer nothing afterwards. */
  close(): void {
    this.closed = true;
    for (const state of this.folders.values()) this.drop(state);
    this.folders.clear();
    this.git.close();
  }

  private readonly run: GitRun = (cwd, args, options) => this.git.run(cwd, args, options);

  private drop(state: FolderState): void {
    clearTimeout(state.timer);
    clearTimeout(state.recheck);
    state.timer = undefined;
    state.recheck = undefined;
    state.watcher.close();
  }

  private touched(cwd: string): void {
    const state = this.folders.get(cwd);
    if (!state) return;
    state.dirty = true;
    if (!state.running && !state.timer) this.schedule(cwd, state, this.settleMs);
  }

  /** Arms the folder's next unprompted look, recheckMs from now (replacing the one armed before). */
  private armRecheck(cwd: string, state: FolderState): void {
    clearTimeout(state.recheck);
    state.recheck = setTimeout(() => {
      state.recheck = undefined;
      if (this.closed || this.folders.get(cwd) !== state) return;
      state.dirty = true;
      // A folder that was in no repository may have become one (`git init`).
      if (state.place === null) state.place = undefined;
      if (!state.running && !state.timer) this.schedule(cwd, state, 0);
    }, this.recheckMs);
    state.recheck.unref();
  }

  private schedule(cwd: string, state: FolderState, delayMs: number): void {
    state.timer = setTimeout(() => {
      state.timer = undefined;
      void this.look(cwd, state);
    }, delayMs);
    state.timer.unref();
  }

  /** One status of the folder; another follows at once when a watch fired meanwhile. */
  private async look(cwd: string, state: FolderState): Promise<void> {
    if (this.closed || this.folders.get(cwd) !== state) return;
    state.running = true;
    state.dirty = false;
    let summary = NONE;
    try {
      if (state.place === undefined) {
        state.place = (await mayBeInRepository(cwd)) ? await findRepository(cwd, this.run).catch(notARepository) : null;
      }
      if (state.place !== null) {
        const status = await readStatus(cwd, undefined, this.run);
        summary = { changedFiles: status.entries.length, branch: status.branch.head };
        const folders = new Set<string>([cwd, state.place.gitDir]);
        for (const entry of status.entries) {
          if (folders.size >= MAX_WATCHED_FOLDERS + 2) break;
          folders.add(dirname(join(state.place.top, entry.path)));
        }
        await state.watcher.set(folders);
      } else {
        await state.watcher.set([]);
      }
    } catch (err) {
      // A folder git cannot read now (removed, timed out) shows no count; the next look tries again.
      this.log.debug("workspace status failed", { error: err instanceof Error ? err.message : String(err) });
      state.place = undefined;
    } finally {
      state.running = false;
    }
    if (this.closed || this.folders.get(cwd) !== state) return;
    const changed = summary.changedFiles !== state.summary.changedFiles || summary.branch !== state.summary.branch;
    state.summary = summary;
    if (state.dirty) this.schedule(cwd, state, this.settleMs);
    this.armRecheck(cwd, state);
    if (changed) this.onChange();
  }
}

function notARepository(err: unknown): null {
  if (err instanceof ConnectError && err.code === Code.FailedPrecondition) return null;
  throw err;
}

/**
 * False when no `.git` (folder or file) is in `cwd` or any folder above it, and git is not pointed
 * elsewhere by GIT_DIR: then `cwd` is in no repository and no git needs to run to say so. A folder in
 * none is looked at again every WORKSPACE_RECHECK_MS (a `git init` may have made it one); a few lstat
 * calls cost far less than starting git each time (about 1 % of a core for 100 such folders).
 */
export async function mayBeInRepository(cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  if (env.GIT_DIR) return true;
  for (let folder = cwd; ; folder = dirname(folder)) {
    const found = await lstat(join(folder, ".git")).then(
      () => true,
      () => false,
    );
    if (found) return true;
    if (dirname(folder) === folder) return false;
  }
}
