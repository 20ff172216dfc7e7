import { constants } from "node:fs";
import { lstat, open, stat } from "node:fs/promises";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  ChangeKind,
  type FileChange,
  FileChangeSchema,
  type GetChangesResponse,
  GetChangesResponseSchema,
  type GetFileDiffResponse,
  GetFileDiffResponseSchema,
} from "../../../gen/staragent/v1/workspace_service_pb.js";
import { BoundedMap } from "../../common/bounded-map.js";
import { confine, looksSecret } from "./confine.js";
import { GitError, type GitRun, runGit } from "./git.js";
import { type NumstatEntry, parseNumstat, parsePorcelainV2, type StatusEntry } from "./porcelain.js";
import { SNIFF_BYTES } from "./sniff.js";

/** Most changed files one GetChanges returns (a generated folder left untracked can hold millions). */
export const MAX_CHANGED_FILES = 5000;
/** Untracked files whose lines are counted (read from disk; git has no count for them). */
const MAX_COUNTED_UNTRACKED = 1000;
/** Largest untracked file whose lines are counted. */
const MAX_COUNTED_BYTES = 1024 * 1024;
/** A diff is cut past this many bytes... */
export const MAX_DIFF_BYTES = 1024 * 1024;
/** ...or this many lines. */
export const MAX_DIFF_LINES = 20_000;

/** Where the session's folder is in its repository. */
export interface RepositoryPlace {
  /** The repository's top folder. */
  readonly top: string;
  /** The session's folder relative to it, with a trailing `/` (`""` at the top). */
  readonly prefix: string;
  /** The repository's git folder (absolute). */
  readonly gitDir: string;
}

/**
 * Finds the repository `cwd` is in: FAILED_PRECONDITION saying so when it is in none (or git refuses
 * the folder, e.g. one owned by another user), so the dashboard offers the file browser only.
 */
export async function findRepository(cwd: string, git: GitRun = runGit): Promise<RepositoryPlace> {
  try {
    const { stdout } = await git(cwd, ["rev-parse", "--show-toplevel", "--show-prefix", "--absolute-git-dir"]);
    const [top = "", prefix = "", gitDir = ""] = stdout.toString("utf8").split("\n");
    if (top === "") throw new GitError("no work tree", 128, "");
    return { top, prefix, gitDir };
  } catch (err) {
    if (err instanceof GitError) {
      const why = /not a git repository/i.test(err.stderr)
        ? "is not in a git repository"
        : `cannot be read by git (${err.stderr.trim().split("\n")[0] ?? ""})`;
      throw new ConnectError(`the session's folder ${cwd} ${why}`, Code.FailedPrecondition);
    }
    throw err;
  }
}

/** The id of the empty tree in this repository's hash (a base for diffs before the first commit). */
async function emptyTree(top: string, git: GitRun): Promise<string> {
  const { stdout } = await git(top, ["hash-object", "-t", "tree", "/dev/null"]);
  return stdout.toString("utf8").trim();
}

/** What `git status` of the session's folder says, with the branch headers. */
export async function readStatus(cwd: string, signal?: AbortSignal, git: GitRun = runGit) {
  const { stdout, truncated } = await git(
    cwd,
    ["status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all", "--ignore-submodules=none", "--", "."],
    { signal },
  );
  const text = stdout.toString("utf8");
  // A cut output ends inside a record: only whole records count.
  const parsed = parsePorcelainV2(truncated ? text.slice(0, text.lastIndexOf("\0") + 1) : text);
  return { ...parsed, truncated };
}

/**
 * GetChanges of a session's folder: the repository it is in, its branch and upstream, and every
 * changed file under the folder (paths relative to it), with lines added and removed against HEAD.
 */
export async function getChanges(
  cwd: string,
  signal?: AbortSignal,
  git: GitRun = runGit,
  remembered: LineCounts = lineCounts,
): Promise<GetChangesResponse> {
  // The status needs only the folder: it runs beside the repository's lookup, not after it.
  // One git at a time: the status beside the lookup showed longer event-loop delays and no clear
  // gain in time (docs/benchmarks.md, "Line counts remembered").
  const place = await findRepository(cwd, git);
  const status = await readStatus(cwd, signal, git);
  const base = status.branch.oid === "" ? await emptyTree(place.top, git) : "HEAD";
  const entries = status.entries.slice(0, MAX_CHANGED_FILES);
  const [counts, merging, rebaseMerge, rebaseApply] = await Promise.all([
    countChanges(place.top, base, entries, git, signal, remembered),
    exists(join(place.gitDir, "MERGE_HEAD")),
    exists(join(place.gitDir, "rebase-merge")),
    exists(join(place.gitDir, "rebase-apply")),
  ]);
  let counted = 0;
  const files: FileChange[] = [];
  for (const entry of entries) {
    let stat: NumstatEntry | undefined = counts.get(entry.path);
    if (entry.change === ChangeKind.UNTRACKED && stat === undefined && counted < MAX_COUNTED_UNTRACKED) {
      counted++;
      stat = await countLines(join(place.top, entry.path));
    }
    files.push(toFileChange(entry, stat, place.prefix));
  }
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return create(GetChangesResponseSchema, {
    repositoryRoot: place.top,
    branch: status.branch.head,
    upstream: status.branch.upstream,
    ahead: status.branch.ahead,
    behind: status.branch.behind,
    headCommit: status.branch.oid,
    mergeInProgress: merging,
    rebaseInProgress: rebaseMerge || rebaseApply,
    files,
    filesTruncated: status.truncated || status.entries.length > MAX_CHANGED_FILES,
    cwdPrefix: place.prefix.replace(/\/$/, ""),
  });
}

/** Line counts remembered (one per changed file of every repository this process looked at). */
const MAX_REMEMBERED_COUNTS = 20_000;
/**
 * A file changed this recently is counted again at every call: a write within the file system's
 * clock tick that kept the size would not change its modification time.
 */
const RACY_MS = 2_000;

/**
 * Line counts of changed files, each with what it was counted from: the status record's sides (modes
 * and object ids of HEAD and the index) and the file's `lstat` (size, times, inode, mode). A count is
 * used again only while both are the same, so a GetChanges of a repository where no file changed
 * since the last one runs no diff at all. Least recently used first out past MAX_REMEMBERED_COUNTS.
 */
export class LineCounts {
  private readonly counts = new BoundedMap<string, { readonly from: string; readonly stat: NumstatEntry }>(
    MAX_REMEMBERED_COUNTS,
  );

  get(key: string, from: string): NumstatEntry | undefined {
    const known = this.counts.get(key);
    if (known === undefined || known.from !== from) return undefined;
    this.counts.set(key, known);
    return known.stat;
  }

  set(key: string, from: string, stat: NumstatEntry): void {
    this.counts.set(key, { from, stat });
  }
}

/** The process's line counts (GetChanges' default). */
const lineCounts = new LineCounts();

/** What a tracked entry's count depends on besides git's record: the file on disk ("" when racy). */
async function countedFrom(top: string, entry: StatusEntry, now: number): Promise<string> {
  if (entry.submodule) return "";
  const info = await lstat(join(top, entry.path), { bigint: true }).catch(() => undefined);
  if (info === undefined) return `${entry.sides}\0${entry.previousPath}\0absent`;
  // Content writes set the modification time (a time set back changes the ctime, which is in the key).
  if (now - Number(info.mtimeMs) < RACY_MS) return "";
  return `${entry.sides}\0${entry.previousPath}\0${info.size}:${info.mtimeNs}:${info.ctimeNs}:${info.ino}:${info.mode}`;
}

/**
 * Lines added and removed against `base` of the tracked files `git status` named (untracked ones are
 * counted from disk), by their path from the top. A file whose count `counts` holds from the same
 * record and the same file on disk is not diffed again; the diff of the others is limited to their
 * paths (and a rename's old path, so renames are still paired): a second scan of the whole work tree
 * would cost as much as the status itself on a large repository, for the same 50 files, and even a
 * path-limited diff reads the whole index (60 to 100 ms on a repository of 100 000 files).
 */
async function countChanges(
  top: string,
  base: string,
  entries: readonly StatusEntry[],
  git: GitRun,
  signal: AbortSignal | undefined,
  counts: LineCounts,
): Promise<Map<string, NumstatEntry>> {
  const tracked = entries.filter((e) => e.change !== ChangeKind.UNTRACKED);
  const now = Date.now();
  const froms = await Promise.all(tracked.map((e) => countedFrom(top, e, now)));
  const known = new Map<string, NumstatEntry>();
  const paths = new Set<string>();
  const toRemember: { path: string; from: string }[] = [];
  tracked.forEach((entry, i) => {
    const from = froms[i] ?? "";
    const stat = from === "" ? undefined : counts.get(`${top}\0${base}\0${entry.path}`, from);
    if (stat !== undefined) {
      known.set(entry.path, stat);
      return;
    }
    paths.add(entry.path);
    if (entry.previousPath !== "") paths.add(entry.previousPath);
    if (from !== "") toRemember.push({ path: entry.path, from });
  });
  if (paths.size === 0) return known;
  const numstat = await git(
    top,
    ["diff", base, "--numstat", "-z", "-M", "--no-ext-diff", "--no-textconv", "--", ...paths],
    { signal },
  );
  const counted = parseNumstat(numstat.stdout.toString("utf8"));
  for (const { path, from } of toRemember) {
    const stat = counted.get(path);
    if (stat !== undefined) counts.set(`${top}\0${base}\0${path}`, from, stat);
  }
  for (const [path, stat] of counted) known.set(path, stat);
  return known;
}

/** A path relative to the repository's top made relative to the session's folder (`../` when outside). */
function underPrefix(path: string, prefix: string): string {
  if (prefix === "") return path;
  if (path.startsWith(prefix)) return path.slice(prefix.length);
  const up = prefix.split("/").filter((p) => p !== "").length;
  return `${"../".repeat(up)}${path}`;
}

function toFileChange(entry: StatusEntry, stat: NumstatEntry | undefined, prefix: string): FileChange {
  return create(FileChangeSchema, {
    path: underPrefix(entry.path, prefix),
    change: entry.change,
    previousPath: entry.previousPath === "" ? "" : underPrefix(entry.previousPath, prefix),
    staged: entry.staged !== ChangeKind.UNSPECIFIED,
    unstaged: entry.unstaged !== ChangeKind.UNSPECIFIED,
    stagedChange: entry.staged,
    unstagedChange: entry.unstaged,
    linesAdded: stat?.added ?? 0,
    linesRemoved: stat?.removed ?? 0,
    binary: stat?.binary ?? false,
    submodule: entry.submodule,
  });
}

/** True when `path` exists (a link: when what it leads to does). */
export async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** Lines of an untracked file as git would count them all added; binary when its start holds NUL. */
async function countLines(path: string): Promise<NumstatEntry | undefined> {
  try {
    const info = await lstat(path);
    if (info.isSymbolicLink()) return { added: 1, removed: 0, binary: false };
    if (!info.isFile() || info.size > MAX_COUNTED_BYTES) return undefined;
    const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      const { buffer, bytesRead } = await handle.read(Buffer.alloc(info.size), 0, info.size, 0);
      const bytes = buffer.subarray(0, bytesRead);
      if (bytes.subarray(0, SNIFF_BYTES).includes(0)) return { added: 0, removed: 0, binary: true };
      let lines = 0;
      for (const b of bytes) if (b === 0x0a) lines++;
      if (bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a) lines++;
      return { added: lines, removed: 0, binary: false };
    } finally {
      await handle.close();
    }
  } catch {
    return undefined;
  }
}

/** What GetFileDiff needs besides the session's folder. */
export interface DiffRequest {
  readonly path: string;
  readonly staged: boolean;
  /** `$STARAGENT_HOME`, never read. */
  readonly home?: string;
  readonly signal?: AbortSignal;
  /** How git is run (default `runGit`). */
  readonly git?: GitRun;
}

/**
 * The unified diff of one file under the session's folder against HEAD (only the index's part with
 * `staged`), an untracked file as all added; cut past MAX_DIFF_BYTES or MAX_DIFF_LINES; a binary file
 * as "binary, N bytes". The path is confined like a read (a secret's diff would show the secret).
 */
export async function getFileDiff(cwd: string, request: DiffRequest): Promise<GetFileDiffResponse> {
  const git = request.git ?? runGit;
  const place = await findRepository(cwd, git);
  const file = await confine(cwd, request.path, { refuseSecrets: true, home: request.home, mayBeMissing: true });
  const path = file.relative;
  if (path === "") throw new ConnectError("path: name a file, not the session's folder", Code.InvalidArgument);
  const untracked = await git(cwd, ["ls-files", "--others", "--exclude-standard", "-z", "--", path], {
    signal: request.signal,
  });
  const isUntracked = untracked.stdout
    .toString("utf8")
    .split("\0")
    .includes(place.prefix + path);
  const common = ["--no-color", "--no-ext-diff", "--no-textconv"];
  let args: string[];
  let gitCwd = cwd;
  if (isUntracked) {
    if (request.staged)
      throw new ConnectError(`${JSON.stringify(path)} is untracked: nothing of it is staged`, Code.NotFound);
    args = ["diff", "--no-index", ...common, "--", "/dev/null", path];
  } else {
    const head = await git(cwd, ["rev-parse", "--verify", "--quiet", "HEAD"], { okCodes: [0, 1] });
    const base = head.code === 0 ? "HEAD" : await emptyTree(place.top, git);
    const renamed = await renamedFrom(place.top, base, place.prefix + path, git, request.signal);
    // The old path is read only when it too is in the session's folder and not a secret's name.
    const from =
      renamed?.startsWith(place.prefix) && !looksSecret(renamed.slice(place.prefix.length)) ? renamed : undefined;
    // A staged rename is diffed with both of its paths (from the top, where status names them), so it
    // shows as the rename with its real changes rather than the new path all added.
    const against = request.staged ? ["--cached", base] : [base];
    if (from) {
      gitCwd = place.top;
      args = ["diff", ...against, "-M", ...common, "--", from, place.prefix + path];
    } else {
      args = ["diff", ...against, ...common, "--", path];
    }
  }
  const result = await git(gitCwd, args, {
    maxBytes: MAX_DIFF_BYTES,
    okCodes: [0, 1],
    signal: request.signal,
  });
  let text = result.stdout.toString("utf8");
  let truncated = result.truncated;
  if (truncated) text = text.slice(0, text.lastIndexOf("\n") + 1);
  const lines = text.split("\n");
  if (lines.length > MAX_DIFF_LINES + 1) {
    text = `${lines.slice(0, MAX_DIFF_LINES).join("\n")}\n`;
    truncated = true;
  }
  if (text === "") {
    throw new ConnectError(
      `${JSON.stringify(path)} has no ${request.staged ? "staged " : ""}change against HEAD`,
      Code.NotFound,
    );
  }
  const binary = /^Binary files .* differ$/m.test(text) || /^GIT binary patch$/m.test(text);
  let added = 0;
  let removed = 0;
  let inHunk = false;
  for (const line of text.split("\n")) {
    if (line.startsWith("@@")) inHunk = true;
    else if (line.startsWith("diff --git")) inHunk = false;
    else if (inHunk && line.startsWith("+")) added++;
    else if (inHunk && line.startsWith("-")) removed++;
  }
  const size = binary ? await fileSize(file.real, cwd, path, git) : 0;
  return create(GetFileDiffResponseSchema, {
    path,
    diff: binary ? "" : text,
    truncated,
    binary,
    binarySummary: binary ? `binary, ${size} bytes` : "",
    linesAdded: added,
    linesRemoved: removed,
  });
}

/**
 * The path (from the repository's top) that `top_path` was renamed from in the index, when the index
 * holds it as a rename of a file in `base`; undefined otherwise. Renames live in the index only (a
 * file moved in the work tree and not staged is a deletion and an untracked file to git).
 */
async function renamedFrom(top: string, base: string, topPath: string, git: GitRun, signal?: AbortSignal) {
  const { stdout } = await git(
    top,
    ["diff", "--cached", base, "-M", "--name-status", "-z", "--diff-filter=R", "--no-ext-diff"],
    { signal },
  );
  const fields = stdout.toString("utf8").split("\0");
  // Records are `R<score>`, the old path, the new path.
  for (let i = 0; i + 2 < fields.length; i += 3) {
    if (fields[i]?.startsWith("R") && fields[i + 2] === topPath) return fields[i + 1];
  }
  return undefined;
}

/** The size of a binary file: in the work tree, or in HEAD when it was deleted. */
async function fileSize(real: string, cwd: string, path: string, git: GitRun): Promise<number> {
  const info = await lstat(real).catch(() => undefined);
  if (info) return info.size;
  const head = await git(cwd, ["cat-file", "-s", `HEAD:./${path}`], { okCodes: [0, 128] }).catch(() => undefined);
  return Number(head?.stdout.toString("utf8").trim()) || 0;
}
