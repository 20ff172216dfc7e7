import { ChangeKind } from "../../../gen/staragent/v1/workspace_service_pb.js";

/**
 * Parsing of `git status --porcelain=v2 -z --branch` (git's documented machine format: NUL-terminated
 * records, paths unquoted and relative to the repository's top folder) and of `git diff --numstat -z`.
 * Pure functions over text, so they are unit-tested and fuzzed without git; whatever the input, they
 * return what they could read and never throw.
 */

/** The branch header lines (`# branch.*`) of a porcelain-v2 status. */
export interface BranchHeaders {
  /** The HEAD commit; empty for `(initial)` (no commit yet). */
  readonly oid: string;
  /** The branch; empty when detached. */
  readonly head: string;
  readonly upstream: string;
  readonly ahead: number;
  readonly behind: number;
}

/** One changed path from a porcelain-v2 status. */
export interface StatusEntry {
  readonly path: string;
  /** For renames and copies (record type 2): the path it came from. */
  readonly previousPath: string;
  /** The index's change (X of XY); UNSPECIFIED when nothing is staged. */
  readonly staged: ChangeKind;
  /** The work tree's change (Y of XY); UNSPECIFIED when nothing is unstaged. */
  readonly unstaged: ChangeKind;
  /** UNMERGED or UNTRACKED for record types `u` and `?`; otherwise the staged change, else the unstaged. */
  readonly change: ChangeKind;
  readonly submodule: boolean;
  /**
   * The record's fields between XY and the path (the submodule state, the modes and the object ids
   * of HEAD's and the index's sides); "" for an untracked file. A line count taken while these and
   * the file on disk are unchanged is still right.
   */
  readonly sides: string;
}

/** A parsed porcelain-v2 status. */
export interface ParsedStatus {
  readonly branch: BranchHeaders;
  readonly entries: StatusEntry[];
}

/** What one status letter (X or Y of XY) means; `.` and anything unknown mean "no change". */
const LETTERS: Readonly<Record<string, ChangeKind>> = {
  M: ChangeKind.MODIFIED,
  A: ChangeKind.ADDED,
  D: ChangeKind.DELETED,
  R: ChangeKind.RENAMED,
  C: ChangeKind.COPIED,
  T: ChangeKind.TYPE_CHANGED,
  U: ChangeKind.UNMERGED,
};

/** Fields before the path in each record type (`1`: XY sub mH mI mW hH hI; `2`: + score; `u`: 10). */
const FIELDS_BEFORE_PATH: Readonly<Record<string, number>> = { "1": 8, "2": 9, u: 10 };

function letter(c: string | undefined): ChangeKind {
  return (c !== undefined && LETTERS[c]) || ChangeKind.UNSPECIFIED;
}

/** The text after the `n`th space (fields before a path never hold spaces; the path may). */
function afterFields(record: string, n: number): string | undefined {
  let at = -1;
  for (let i = 0; i < n; i++) {
    at = record.indexOf(" ", at + 1);
    if (at < 0) return undefined;
  }
  return record.slice(at + 1);
}

function count(text: string | undefined): number {
  const n = Number(text);
  return Number.isSafeInteger(n) && n >= 0 ? n : 0;
}

/**
 * Parses porcelain-v2 `-z` output. Records it cannot read (cut short, unknown type) are skipped; a
 * record of type `2` takes the following NUL-terminated field as its previous path. Ignored files
 * (`!`) are not changes and are left out.
 */
export function parsePorcelainV2(output: string): ParsedStatus {
  let oid = "";
  let head = "";
  let upstream = "";
  let ahead = 0;
  let behind = 0;
  const entries: StatusEntry[] = [];
  const records = output.split("\0");
  for (let i = 0; i < records.length; i++) {
    const record = records[i] ?? "";
    const type = record.slice(0, 2);
    if (record.startsWith("# ")) {
      const [key, ...rest] = record.slice(2).split(" ");
      const value = rest.join(" ");
      if (key === "branch.oid") oid = /^[0-9a-f]{7,64}$/.test(value) ? value : "";
      else if (key === "branch.head") head = value === "(detached)" ? "" : value;
      else if (key === "branch.upstream") upstream = value;
      else if (key === "branch.ab") {
        const m = /^\+(\d+) -(\d+)$/.exec(value);
        ahead = count(m?.[1]);
        behind = count(m?.[2]);
      }
      continue;
    }
    if (type === "? ") {
      const path = record.slice(2);
      if (path !== "") {
        entries.push({
          path,
          previousPath: "",
          staged: ChangeKind.UNSPECIFIED,
          unstaged: ChangeKind.UNTRACKED,
          change: ChangeKind.UNTRACKED,
          submodule: path.endsWith("/"),
          sides: "",
        });
      }
      continue;
    }
    const kind = record[0] ?? "";
    const fields = record[1] === " " ? FIELDS_BEFORE_PATH[kind] : undefined;
    if (fields === undefined) continue;
    const path = afterFields(record, fields);
    const xy = record.slice(2, 4);
    const sub = record.slice(5, 9);
    if (path === undefined || path === "" || xy.length !== 2 || record[4] !== " ") continue;
    let previousPath = "";
    if (kind === "2") {
      previousPath = records[i + 1] ?? "";
      i++;
    }
    const staged = kind === "u" ? ChangeKind.UNMERGED : letter(xy[0]);
    const unstaged = kind === "u" ? ChangeKind.UNMERGED : letter(xy[1]);
    const change =
      kind === "u" ? ChangeKind.UNMERGED : staged !== ChangeKind.UNSPECIFIED ? staged : unstaged || ChangeKind.MODIFIED;
    const sides = record.slice(5, record.length - path.length - 1);
    entries.push({ path, previousPath, staged, unstaged, change, submodule: sub.startsWith("S"), sides });
  }
  return { branch: { oid, head, upstream, ahead, behind }, entries };
}

/** Lines added and removed for one path; `binary` when git printed `-` for both. */
export interface NumstatEntry {
  readonly added: number;
  readonly removed: number;
  readonly binary: boolean;
}

/**
 * Parses `git diff --numstat -z` into counts by path (the new path of a rename, whose record is
 * `added\tremoved\t\0old\0new\0`). Unreadable records are skipped.
 */
export function parseNumstat(output: string): Map<string, NumstatEntry> {
  const out = new Map<string, NumstatEntry>();
  const fields = output.split("\0");
  for (let i = 0; i < fields.length; i++) {
    const m = /^(\d+|-)\t(\d+|-)\t(.*)$/s.exec(fields[i] ?? "");
    if (!m) continue;
    let path = m[3] ?? "";
    if (path === "") {
      path = fields[i + 2] ?? "";
      i += 2;
    }
    if (path === "") continue;
    const binary = m[1] === "-" && m[2] === "-";
    out.set(path, { added: binary ? 0 : count(m[1]), removed: binary ? 0 : count(m[2]), binary });
  }
  return out;
}
