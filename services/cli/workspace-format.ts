import { ChangeKind, type FileChange, type GetChangesResponse } from "../../gen/staragent/v1/workspace_service_pb.js";
import { safeText } from "./safe-text.js";

/** ANSI colours used when stdout is a terminal; none otherwise (pipes and files get plain text). */
export interface Palette {
  readonly green: (s: string) => string;
  readonly red: (s: string) => string;
  readonly cyan: (s: string) => string;
  readonly bold: (s: string) => string;
  readonly dim: (s: string) => string;
}

const wrap = (code: string) => (s: string) => `\x1b[${code}m${s}\x1b[0m`;

/** Colours at a terminal (unless NO_COLOR is set), plain text elsewhere. */
export function palette(colour: boolean): Palette {
  if (!colour) {
    const plain = (s: string) => s;
    return { green: plain, red: plain, cyan: plain, bold: plain, dim: plain };
  }
  return { green: wrap("32"), red: wrap("31"), cyan: wrap("36"), bold: wrap("1"), dim: wrap("2") };
}

/** True when `stream` should get colour: a terminal, and NO_COLOR not set. */
export function wantsColour(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv): boolean {
  return stream.isTTY === true && (env.NO_COLOR ?? "") === "";
}

/** One-letter code of a change, as `git status --short` shows it. */
const LETTER: Readonly<Record<number, string>> = {
  [ChangeKind.ADDED]: "A",
  [ChangeKind.MODIFIED]: "M",
  [ChangeKind.DELETED]: "D",
  [ChangeKind.RENAMED]: "R",
  [ChangeKind.COPIED]: "C",
  [ChangeKind.TYPE_CHANGED]: "T",
  [ChangeKind.UNMERGED]: "U",
  [ChangeKind.UNTRACKED]: "?",
};

function fileLine(f: FileChange, kind: ChangeKind, p: Palette): string {
  const name =
    f.previousPath !== "" && (kind === ChangeKind.RENAMED || kind === ChangeKind.COPIED)
      ? `${safeText(f.previousPath)} -> ${safeText(f.path)}`
      : safeText(f.path);
  const counts = f.binary ? p.dim("binary") : `${p.green(`+${f.linesAdded}`)} ${p.red(`-${f.linesRemoved}`)}`;
  const sub = f.submodule ? p.dim(" (submodule)") : "";
  return `  ${LETTER[kind] ?? " "}  ${name}${sub}  ${counts}`;
}

/**
 * `staragent changes` as text: the repository and branch line, then the files grouped as a person
 * reads them (conflicts, staged, unstaged, untracked), each with its lines added and removed.
 */
export function changesText(res: GetChangesResponse, p: Palette): string {
  const upstream =
    res.upstream === "" ? "" : ` ${p.dim(`-> ${safeText(res.upstream)}`)} ahead ${res.ahead}, behind ${res.behind}`;
  const head = res.branch === "" ? `detached at ${res.headCommit.slice(0, 12) || "no commit"}` : safeText(res.branch);
  const state = [res.mergeInProgress ? "merge in progress" : "", res.rebaseInProgress ? "rebase in progress" : ""]
    .filter((s) => s !== "")
    .map((s) => p.red(` (${s})`))
    .join("");
  const lines = [`${p.bold(head)}${upstream}${state}  ${p.dim(safeText(res.repositoryRoot))}`];
  const groups: Array<[string, Array<[FileChange, ChangeKind]>]> = [
    ["Unmerged", res.files.filter((f) => f.change === ChangeKind.UNMERGED).map((f) => [f, f.change])],
    [
      "Staged",
      res.files.filter((f) => f.change !== ChangeKind.UNMERGED && f.staged).map((f) => [f, f.stagedChange || f.change]),
    ],
    [
      "Unstaged",
      res.files
        .filter((f) => f.change !== ChangeKind.UNMERGED && f.change !== ChangeKind.UNTRACKED && f.unstaged)
        .map((f) => [f, f.unstagedChange || f.change]),
    ],
    ["Untracked", res.files.filter((f) => f.change === ChangeKind.UNTRACKED).map((f) => [f, f.change])],
  ];
  for (const [title, files] of groups) {
    if (files.length === 0) continue;
    lines.push("", `${title} (${files.length}):`, ...files.map(([f, kind]) => fileLine(f, kind, p)));
  }
  if (res.files.length === 0) lines.push("", "no changes");
  if (res.filesTruncated) lines.push("", p.dim(`(only the first ${res.files.length} changed files are shown)`));
  return `${lines.join("\n")}\n`;
}

/** A unified diff for a terminal: control characters escaped, additions green, removals red, hunks cyan. */
export function diffText(diff: string, p: Palette): string {
  return diff
    .split("\n")
    .map((raw) => {
      const line = safeText(raw);
      if (raw.startsWith("+++ ") || raw.startsWith("--- ") || raw.startsWith("diff --git")) return p.bold(line);
      if (raw.startsWith("@@")) return p.cyan(line);
      if (raw.startsWith("+")) return p.green(line);
      if (raw.startsWith("-")) return p.red(line);
      return line;
    })
    .join("\n");
}
