import { timestampMs } from "@bufbuild/protobuf/wkt";
import { Cli, type Session, SessionOrigin, SessionStatus } from "../../../gen/staragent/v1/session_pb.js";

/** Row density: comfortable (three lines a session) or compact (one line, for 30+ sessions). */
export type ListDensity = "comfortable" | "compact";
/** Order within a group: by name (rows stay put), or by attention (review, working, then recency). */
export type ListSort = "name" | "attention";
/** Groups: by node, or by folder (the repository of a worktree, else the session's folder). */
export type ListGroup = "node" | "folder";

/** How the session list is laid out; a preference of this browser (PreferencesStore). */
export interface ListView {
  readonly density: ListDensity;
  readonly sort: ListSort;
  readonly group: ListGroup;
  /** Hides shells StarAgent did not start (plain tmux sessions someone opened). */
  readonly hideShells: boolean;
}

/** The layout a new browser starts with: the list as it always was. */
export const DEFAULT_LIST_VIEW: ListView = { density: "comfortable", sort: "name", group: "node", hideShells: false };

/** A stored layout: defaults for anything missing or of the wrong kind. */
export function parseListView(value: unknown): ListView {
  const v = typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
  return {
    density: v.density === "compact" ? "compact" : "comfortable",
    sort: v.sort === "attention" ? "attention" : "name",
    group: v.group === "folder" ? "folder" : "node",
    hideShells: v.hideShells === true,
  };
}

/** True for a shell StarAgent neither created nor adopted: what "hide shells" hides. */
export function isUnmanagedShell(s: Session): boolean {
  return s.cli === Cli.SHELL && s.origin === SessionOrigin.UNMANAGED;
}

/** The folder a session is grouped under: its worktree's repository, else its working folder. */
export function folderOf(s: Session): string {
  return s.worktree?.repositoryRoot || s.cwd || "(no folder)";
}

/** Attention rank: review first, then working, then the rest. */
function attentionRank(s: Session): number {
  if (s.status === SessionStatus.REVIEW) return 0;
  if (s.status === SessionStatus.WORKING) return 1;
  return 2;
}

/** Names as a person reads them: case and accents aside first, digits by value ("bulk-2" before "bulk-10"). */
const NAME_ORDER = new Intl.Collator(undefined, { sensitivity: "base", numeric: true });

function byName(a: Session, b: Session): number {
  return (
    NAME_ORDER.compare(a.tmuxSession, b.tmuxSession) ||
    (a.tmuxSession < b.tmuxSession ? -1 : a.tmuxSession > b.tmuxSession ? 1 : 0) ||
    (a.node < b.node ? -1 : a.node > b.node ? 1 : 0)
  );
}

/** Sorts sessions in place in the list's order (`sort`), and returns them. */
export function sortSessions(list: Session[], sort: ListSort): Session[] {
  if (sort === "name") return list.sort(byName);
  const recent = (s: Session) => (s.lastActivityTime ? timestampMs(s.lastActivityTime) : 0);
  return list.sort((a, b) => attentionRank(a) - attentionRank(b) || recent(b) - recent(a) || byName(a, b));
}
