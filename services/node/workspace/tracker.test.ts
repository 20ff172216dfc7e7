import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { GIT_TEST_ENV, git } from "../../../test/support/git.js";
import { waitFor } from "../../../test/support/wait.js";
import { createLogger } from "../../common/log.js";
import { MAX_WHOLE_FOLDERS, mayBeInRepository, WORKSPACE_RECHECK_MS, WorkspaceTracker } from "./tracker.js";

/** The recheck interval the tests run with: short, and far from the settle time so the two cannot be confused. */
const TEST_RECHECK_MS = 400;
/** A settle time longer than any test: a look that a file watch caused would never run within it. */
const NEVER_MS = 600_000;

let dir: string;
let savedEnv: NodeJS.ProcessEnv;
const trackers: WorkspaceTracker[] = [];
const log = createLogger("test", "error", () => undefined);

beforeAll(async () => {
  savedEnv = { ...process.env };
  Object.assign(process.env, { GIT_CONFIG_GLOBAL: GIT_TEST_ENV.GIT_CONFIG_GLOBAL, GIT_CONFIG_NOSYSTEM: "1" });
  dir = await realpath(await mkdtemp(join(tmpdir(), "sa-tracker-")));
});

afterEach(() => {
  for (const t of trackers.splice(0)) t.close();
});

afterAll(async () => {
  process.env = savedEnv;
  await rm(dir, { recursive: true, force: true });
});

function tracker(timing: { settleMs: number; recheckMs: number; wholeRecheckMs?: number }) {
  let changes = 0;
  const t = new WorkspaceTracker(() => changes++, log, timing);
  trackers.push(t);
  return { t, changes: () => changes };
}

describe("WorkspaceTracker's recheck of folders no watch covers", () => {
  it("is under a minute by default", () => {
    expect(WORKSPACE_RECHECK_MS).toBeLessThan(60_000);
  });

  it("finds an edit deep in an unwatched folder by its own timer, with nobody reading the model", async () => {
    // More tracked folders than are watched whole: a write deep in one of them fires no watch.
    const repo = join(dir, "deep");
    await mkdir(join(repo, "a", "b"), { recursive: true });
    git(repo, "init", "-q", "-b", "main");
    await writeFile(join(repo, "a", "b", "kept.txt"), "kept\n");
    for (let i = 0; i <= MAX_WHOLE_FOLDERS; i++) {
      await mkdir(join(repo, "many", String(i)), { recursive: true });
      await writeFile(join(repo, "many", String(i), "f"), "f\n");
    }
    git(repo, "add", ".");
    git(repo, "commit", "-qm", "first");
    // File watches would only call for a look after NEVER_MS: only the recheck can find the edit.
    const { t, changes } = tracker({ settleMs: NEVER_MS, recheckMs: TEST_RECHECK_MS, wholeRecheckMs: NEVER_MS });
    expect(t.lookup(repo).changedFiles).toBeUndefined();
    await waitFor(() => changes() === 1, "the first look");
    expect(t.lookup(repo)).toEqual({ changedFiles: 0, branch: "main" });
    expect(t.watchedWhole(repo)).toBe(false);
    await writeFile(join(repo, "a", "b", "kept.txt"), "edited\n");
    // Not lookup(): the model is read by nobody; the change must be announced through onChange.
    await waitFor(() => changes() === 2, "the recheck to find the edit", 10_000);
    expect(t.lookup(repo)).toEqual({ changedFiles: 1, branch: "main" });
  });
});

describe("WorkspaceTracker's folders watched whole", () => {
  /** A repository of `folders` tracked folders (`src/0/1/…` nested, so each counts). */
  async function repository(name: string, depth: number): Promise<string> {
    const repo = join(dir, name);
    let folder = join(repo, "src");
    for (let i = 0; i < depth; i++) folder = join(folder, String(i));
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, "deep.txt"), "deep\n");
    git(repo, "init", "-q", "-b", "main");
    git(repo, "add", ".");
    git(repo, "commit", "-qm", "first");
    return repo;
  }

  it("sees an edit in any tracked folder and a file added in a new untracked one by their watches, with no recheck", async () => {
    const repo = await repository("whole", 5);
    const { t, changes } = tracker({ settleMs: 50, recheckMs: NEVER_MS, wholeRecheckMs: NEVER_MS });
    t.lookup(repo);
    await waitFor(() => changes() === 1, "the first look");
    expect(t.watchedWhole(repo)).toBe(true);
    await writeFile(join(repo, "src", "0", "1", "2", "3", "4", "deep.txt"), "edited\n");
    await waitFor(() => t.lookup(repo).changedFiles === 1, "the edit deep in the tree");
    await mkdir(join(repo, "notes", "today"), { recursive: true });
    await writeFile(join(repo, "notes", "today", "a.md"), "a\n");
    await waitFor(() => t.lookup(repo).changedFiles === 2, "the new untracked file");
    // Its folders are watched now: a second file in the middle one is seen too.
    await writeFile(join(repo, "notes", "b.md"), "b\n");
    await waitFor(() => t.lookup(repo).changedFiles === 3, "a file beside the new folder");
    expect(t.watchedWhole(repo)).toBe(true);
  });

  it("watches a session folder inside a repository from that folder down", async () => {
    const repo = await repository("inner", 3);
    const cwd = join(repo, "src", "0");
    const { t, changes } = tracker({ settleMs: 50, recheckMs: NEVER_MS, wholeRecheckMs: NEVER_MS });
    t.lookup(cwd);
    await waitFor(() => changes() === 1, "the first look");
    expect(t.watchedWhole(cwd)).toBe(true);
    await writeFile(join(cwd, "1", "2", "deep.txt"), "edited\n");
    await waitFor(() => t.lookup(cwd).changedFiles === 1, "the edit below the session folder");
  });

  it("does not count a repository with submodules, or with more folders than MAX_WHOLE_FOLDERS, as whole", async () => {
    const many = await repository("too-many", MAX_WHOLE_FOLDERS + 1);
    const withModules = await repository("with-modules", 1);
    await writeFile(join(withModules, ".gitmodules"), "");
    const { t, changes } = tracker({ settleMs: 50, recheckMs: NEVER_MS, wholeRecheckMs: NEVER_MS });
    t.lookup(many);
    t.lookup(withModules);
    await waitFor(() => changes() === 2, "both first looks");
    expect(t.watchedWhole(many)).toBe(false);
    expect(t.watchedWhole(withModules)).toBe(false);
  });
});

describe("WorkspaceTracker's folders in no repository", () => {
  it.each([
    ["in the folder itself", "itself", "."],
    ["in a folder above it", "above/child", ".."],
  ])("finds a repository made %s (git init) by its recheck", async (_where, folder, initAt) => {
    const cwd = join(dir, "made-later", folder);
    await mkdir(cwd, { recursive: true });
    const { t, changes } = tracker({ settleMs: NEVER_MS, recheckMs: TEST_RECHECK_MS });
    expect(t.lookup(cwd).changedFiles).toBeUndefined();
    git(join(cwd, initAt), "init", "-q", "-b", "trunk");
    await writeFile(join(cwd, "new.txt"), "new\n");
    await waitFor(() => changes() === 1, "the recheck to find the new repository", 10_000);
    expect(t.lookup(cwd)).toEqual({ changedFiles: 1, branch: "trunk" });
  });
});

describe("mayBeInRepository", () => {
  it("is false with no .git up the tree, true beside a .git folder or file, and under GIT_DIR", async () => {
    const none = join(dir, "none", "deeper");
    await mkdir(none, { recursive: true });
    expect(await mayBeInRepository(none, {})).toBe(false);
    expect(await mayBeInRepository(none, { GIT_DIR: "/elsewhere/.git" })).toBe(true);
    const repo = join(dir, "has-git");
    await mkdir(join(repo, ".git", "x"), { recursive: true });
    await mkdir(join(repo, "src", "lib"), { recursive: true });
    expect(await mayBeInRepository(join(repo, "src", "lib"), {})).toBe(true);
    // A linked worktree's .git is a file.
    const worktree = join(dir, "worktree");
    await mkdir(worktree);
    await writeFile(join(worktree, ".git"), "gitdir: /somewhere/.git/worktrees/w\n");
    expect(await mayBeInRepository(worktree, {})).toBe(true);
  });
});
