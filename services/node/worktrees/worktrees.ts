import { realpath, stat } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { GitError, runGit } from "../workspace/git.js";

/** Longest branch name accepted: git allows more, but a branch is typed and shown by people. */
const MAX_BRANCH_CHARS = 200;
/** Refs looked at when deciding whether a worktree's commits are on another branch. */
const MAX_OTHER_REFS = 20_000;
/** C0 controls, DEL and C1 controls. */
const CONTROL_CHARACTER = /\p{Cc}/u;

/** A worktree StarAgent added: where, on which branch, of which repository. */
export interface AddedWorktree {
  readonly path: string;
  readonly branch: string;
  readonly repositoryRoot: string;
  /** Where the session starts: the same subfolder of the worktree as the request's cwd was of the repository. */
  readonly sessionCwd: string;
}

/** What CreateSession asks of a worktree. */
export interface WorktreeRequest {
  readonly branch: string;
  readonly baseRef: string;
  readonly path: string;
}

function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/** Runs git and turns its refusal into `code` with a sentence that starts with `what`. */
async function git(cwd: string, args: string[], what: string, code = Code.FailedPrecondition) {
  try {
    return (await runGit(cwd, args)).stdout.toString("utf8");
  } catch (err) {
    if (err instanceof GitError) {
      throw new ConnectError(`${what}: ${err.stderr.trim().split("\n")[0] || `git exited with ${err.code}`}`, code);
    }
    throw err;
  }
}

/** Exit 0 or not, for git's yes/no questions (`show-ref --verify --quiet`). */
async function gitSays(cwd: string, args: string[]): Promise<boolean> {
  try {
    await runGit(cwd, args);
    return true;
  } catch (err) {
    if (err instanceof GitError) return false;
    throw err;
  }
}

/** INVALID_ARGUMENT unless `branch` is a name git allows for a new branch (and a person can read). */
async function checkBranch(cwd: string, branch: string): Promise<void> {
  if (branch === "") throw new ConnectError("worktree.branch: name the new branch", Code.InvalidArgument);
  if (branch.length > MAX_BRANCH_CHARS || CONTROL_CHARACTER.test(branch) || branch.startsWith("-")) {
    throw new ConnectError(
      `worktree.branch: ${JSON.stringify(branch)} is not a usable branch name (no control characters, no leading "-", at most ${MAX_BRANCH_CHARS} characters)`,
      Code.InvalidArgument,
    );
  }
  if (!(await gitSays(cwd, ["check-ref-format", "--branch", branch]))) {
    throw new ConnectError(
      `worktree.branch: git does not allow ${JSON.stringify(branch)} as a branch name`,
      Code.InvalidArgument,
    );
  }
}

/** The folders of the repository's worktrees (`git worktree list --porcelain`). */
async function worktreeFolders(top: string): Promise<string[]> {
  const out = await git(top, ["worktree", "list", "--porcelain", "-z"], "cannot list the repository's worktrees");
  return out
    .split("\0")
    .filter((line) => line.startsWith("worktree "))
    .map((line) => line.slice("worktree ".length));
}

/**
 * Adds a worktree for a new session: `git worktree add -b BRANCH PATH BASE` in the repository that `cwd`
 * is in. The base is resolved to a commit first (a ref that looks like an option is only ever a
 * commit id by then); the path must not exist, nor lie inside any worktree of the repository or
 * StarAgent's home. Nothing existing is touched: an existing branch or path is ALREADY_EXISTS.
 */
export async function addWorktree(cwd: string, request: WorktreeRequest, stateHome: string): Promise<AddedWorktree> {
  const top = (
    await git(cwd, ["rev-parse", "--show-toplevel"], `cwd: ${JSON.stringify(cwd)} is not in a git repository`)
  ).trim();
  await checkBranch(top, request.branch);
  if (await gitSays(top, ["show-ref", "--verify", "--quiet", `refs/heads/${request.branch}`])) {
    throw new ConnectError(
      `worktree.branch: a branch ${request.branch} exists already in ${top}; choose a new name (StarAgent starts new branches only)`,
      Code.AlreadyExists,
    );
  }
  const base = request.baseRef === "" ? "HEAD" : request.baseRef;
  if (CONTROL_CHARACTER.test(base)) {
    throw new ConnectError("worktree.base_ref: contains a control character", Code.InvalidArgument);
  }
  const commit = (
    await git(
      top,
      ["rev-parse", "--verify", "--quiet", "--end-of-options", `${base}^{commit}`],
      `worktree.base_ref: ${JSON.stringify(base)} is not a commit, branch or tag of ${top}`,
    )
  ).trim();
  const path =
    request.path === "" ? join(dirname(top), `${basename(top)}-${request.branch.replace(/\//g, "-")}`) : request.path;
  if (!isAbsolute(path) || CONTROL_CHARACTER.test(path) || path.split("/").includes("..")) {
    throw new ConnectError(
      `worktree.path: ${JSON.stringify(path)} must be an absolute path without ".." or control characters`,
      Code.InvalidArgument,
    );
  }
  const target = resolve(path);
  if (
    await stat(target).then(
      () => true,
      () => false,
    )
  ) {
    throw new ConnectError(`worktree.path: ${target} exists already; name a new folder`, Code.AlreadyExists);
  }
  const realParent = await realpath(dirname(target)).catch(() => {
    throw new ConnectError(`worktree.path: the folder ${dirname(target)} does not exist`, Code.FailedPrecondition);
  });
  const realTarget = join(realParent, basename(target));
  const realState = await realpath(stateHome).catch(() => resolve(stateHome));
  if (isInside(realState, realTarget)) {
    throw new ConnectError(`worktree.path: ${target} is inside StarAgent's own folder`, Code.PermissionDenied);
  }
  for (const folder of await worktreeFolders(top)) {
    if (isInside(folder, realTarget)) {
      throw new ConnectError(
        `worktree.path: ${target} is inside the worktree ${folder}; a worktree goes beside the others, not in one`,
        Code.FailedPrecondition,
      );
    }
  }
  await git(top, ["worktree", "add", "-b", request.branch, "--", realTarget, commit], "git worktree add failed");
  const realCwd = await realpath(cwd);
  const sub = relative(await realpath(top), realCwd);
  const inside = sub === "" || sub.startsWith("..") ? realTarget : join(realTarget, sub);
  const sessionCwd = (await stat(inside).catch(() => undefined))?.isDirectory() ? inside : realTarget;
  return { path: realTarget, branch: request.branch, repositoryRoot: top, sessionCwd };
}

/**
 * What removing the worktree would lose, in sentences; empty when nothing: uncommitted changes or
 * untracked files, and commits reachable from its HEAD that no other branch (local or remote) has.
 */
export async function worktreeLosses(path: string, branch: string): Promise<string[]> {
  if (!(await stat(path).catch(() => undefined))?.isDirectory()) return [];
  const losses: string[] = [];
  const status = await git(
    path,
    ["status", "--porcelain=v1", "-z", "--untracked-files=normal"],
    "cannot read the worktree's status",
  );
  const dirty = status.split("\0").filter((entry) => entry.length > 3).length;
  if (dirty > 0) losses.push(`${dirty} file${dirty === 1 ? " has" : "s have"} uncommitted changes or are untracked`);
  const refs = (
    await git(path, ["for-each-ref", "--format=%(refname)", "refs/heads", "refs/remotes"], "cannot list the branches")
  )
    .split("\n")
    .filter((ref) => ref !== "" && ref !== `refs/heads/${branch}` && !ref.endsWith("/HEAD"))
    .slice(0, MAX_OTHER_REFS);
  const unique = Number(
    (
      await git(path, ["rev-list", "--count", "HEAD", "--not", ...refs, "--"], "cannot count the worktree's commits")
    ).trim(),
  );
  if (unique > 0) {
    losses.push(`${unique} commit${unique === 1 ? " is" : "s are"} on no other branch (merge or push ${branch} first)`);
  }
  return losses;
}

/** `git worktree remove PATH` (never forced: git itself refuses a worktree that changed meanwhile). */
export async function removeWorktree(repositoryRoot: string, path: string): Promise<void> {
  if (!(await stat(path).catch(() => undefined))?.isDirectory()) return;
  await git(repositoryRoot, ["worktree", "remove", "--", path], `the worktree ${path} was not removed`);
}
