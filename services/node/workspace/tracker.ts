import { lstat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Logger } from "../../common/log.js";
import { PathWatcher } from "../status/path-watcher.js";
import { exists, findRepository, type RepositoryPlace, readStatus } from "./changes.js";
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
/**
 * A folder whose every folder is watched (`FolderState.whole`) is looked at again only this long after
 * its last look without an event: a watch lost without an event (inotify's queue overflowing) is found
 * within this time.
 */
export const WORKSPACE_WHOLE_RECHECK_MS = 600_000;
/** Folders of changed files watched per session folder (besides the folder itself and the git folder). */
const MAX_WATCHED_FOLDERS = 32;
/**
 * Most folders a session folder may hold for all of them to be watched (tracked folders from the tree
 * of HEAD, and the folders of untracked files): a folder with more keeps WORKSPACE_RECHECK_MS.
 */
export const MAX_WHOLE_FOLDERS = 64;
/**
 * Most watches the tracker spends on watching whole folders, over all session folders: inotify's watch
 * limit is the user's, shared with editors and the CLIs' own watchers (8192 on older kernels).
 */
const MAX_WHOLE_WATCHES = 2_048;

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
  /**
   * True when every folder under the session folder that can change its status is watched (its tracked
   * folders, the folders of its untracked files, the git folder): a change fires a watch, so the recheck
   * waits WORKSPACE_WHOLE_RECHECK_MS instead.
   */
  whole: boolean;
  /** Watches counted against MAX_WHOLE_WATCHES while `whole`. */
  wholeWatches: number;
  /** The tracked folders under the session folder, for the HEAD commit `treeOid` (undefined: too many). */
  tree: { readonly oid: string; readonly folders: readonly string[] | undefined } | undefined;
}

const NONE: WorkspaceSummary = { changedFiles: undefined, branch: "" };

/** The tracker's timing; tests shorten it (defaults: WORKSPACE_SETTLE_MS, WORKSPACE_RECHECK_MS). */
export interface WorkspaceTiming {
  readonly settleMs?: number;
  readonly recheckMs?: number;
  /** The recheck of a folder watched whole (default WORKSPACE_WHOLE_RECHECK_MS). */
  readonly wholeRecheckMs?: number;
}

/**
 * Keeps each session folder's changed-file count and branch (Session.changed_files, branch) without a
 * `git status` per session per poll: one status per folder, run again only when a file watch on its
 * git folder (index, HEAD), the folder itself, its tracked folders (where they are few) or the
 * folders of its changed files fires, and WORKSPACE_RECHECK_MS after its last look otherwise
 * (WORKSPACE_WHOLE_RECHECK_MS when every folder that can change its status is watched). Sessions share their folder's result. `onChange` is called when a result
 * changed, so the model is read again and watchers hear of it.
 */
export class WorkspaceTracker {
  private readonly folders = new Map<string, FolderState>();
  private closed = false;
  private readonly settleMs: number;
  private readonly recheckMs: number;
  private readonly wholeRecheckMs: number;
  /** Watches spent on folders watched whole (MAX_WHOLE_WATCHES). */
  private wholeWatches = 0;
  /** The statuses run every WORKSPACE_RECHECK_MS per folder: through one long-lived shell, not a spawn each. */
  private readonly git = new GitShell();

  constructor(
    private readonly onChange: () => void,
    private readonly log: Logger,
    timing: WorkspaceTiming = {},
  ) {
    this.settleMs = timing.settleMs ?? WORKSPACE_SETTLE_MS;
    this.recheckMs = timing.recheckMs ?? WORKSPACE_RECHECK_MS;
    this.wholeRecheckMs = timing.wholeRecheckMs ?? WORKSPACE_WHOLE_RECHECK_MS;
  }

  /** True when every folder of `cwd` that can change its status is watched (diagnostics and tests). */
  watchedWhole(cwd: string): boolean {
    return this.folders.get(cwd)?.whole ?? false;
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
        whole: false,
        wholeWatches: 0,
        tree: undefined,
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
    this.setWhole(state, false, 0);
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

  private setWhole(state: FolderState, whole: boolean, watches: number): void {
    this.wholeWatches += (whole ? watches : 0) - state.wholeWatches;
    state.whole = whole;
    state.wholeWatches = whole ? watches : 0;
  }

  /**
   * Arms the folder's next unprompted look, recheckMs from now (wholeRecheckMs for a folder watched
   * whole), replacing the one armed before.
   */
  private armRecheck(cwd: string, state: FolderState): void {
    clearTimeout(state.recheck);
    state.recheck = setTimeout(
      () => {
        state.recheck = undefined;
        if (this.closed || this.folders.get(cwd) !== state) return;
        state.dirty = true;
        // A folder that was in no repository may have become one (`git init`).
        if (state.place === null) state.place = undefined;
        if (!state.running && !state.timer) this.schedule(cwd, state, 0);
      },
      state.whole ? this.wholeRecheckMs : this.recheckMs,
    );
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
        const place = state.place;
        const status = await readStatus(cwd, undefined, this.run);
        summary = { changedFiles: status.entries.length, branch: status.branch.head };
        const tree = await this.trackedFolders(cwd, place, state, status.branch.oid);
        const room = Math.min(MAX_WHOLE_FOLDERS, MAX_WHOLE_WATCHES - (this.wholeWatches - state.wholeWatches));
        let whole = tree !== undefined && tree.length <= room;
        const limit = whole ? room : MAX_WATCHED_FOLDERS;
        const folders = new Set<string>([cwd, place.gitDir]);
        if (whole) for (const folder of tree ?? []) folders.add(folder);
        entries: for (const entry of status.entries) {
          // A changed file's folders up to the session folder: a file added beside it fires a watch.
          for (
            let folder = dirname(join(place.top, entry.path));
            folder.startsWith(`${cwd}/`) && !folders.has(folder);
            folder = dirname(folder)
          ) {
            if (folders.size >= limit + 2) {
              whole = false;
              break entries;
            }
            folders.add(folder);
          }
        }
        await state.watcher.set(folders);
        whole = whole && [...folders].every((folder) => state.watcher.covers(folder));
        this.setWhole(state, whole, folders.size);
      } else {
        await state.watcher.set([]);
        this.setWhole(state, false, 0);
      }
    } catch (err) {
      // A folder git cannot read now (removed, timed out) shows no count; the next look tries again.
      this.log.debug("workspace status failed", { error: err instanceof Error ? err.message : String(err) });
      state.place = undefined;
      state.tree = undefined;
      this.setWhole(state, false, 0);
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

  /**
   * The folders under `cwd` that hold tracked files, from the tree of the HEAD commit `oid` (read once per
   * commit); none for a repository with no commit yet. Undefined when they are more than
   * MAX_WHOLE_FOLDERS, or the repository has submodules (a write inside one is in another repository's
   * folders), or git could not list them: the folder is then not watched whole.
   */
  private async trackedFolders(
    cwd: string,
    place: RepositoryPlace,
    state: FolderState,
    oid: string,
  ): Promise<readonly string[] | undefined> {
    if (state.tree?.oid === oid) return state.tree.folders;
    let folders: string[] | undefined;
    if (await exists(join(place.top, ".gitmodules"))) folders = undefined;
    else if (oid === "") folders = [];
    else {
      // One more than the most kept: a listing cut there says "too many" without reading a huge tree.
      const listed = await this.run(cwd, ["ls-tree", "-r", "-d", "-z", "--name-only", oid], {
        maxBytes: 64 * 1024,
      }).catch(() => undefined);
      if (listed && !listed.truncated) {
        const names = listed.stdout
          .toString("utf8")
          .split("\0")
          .filter((n) => n !== "" && n !== "./");
        if (names.length <= MAX_WHOLE_FOLDERS) folders = names.map((n) => join(cwd, n.replace(/\/$/, "")));
      }
    }
    state.tree = { oid, folders };
    return folders;
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
