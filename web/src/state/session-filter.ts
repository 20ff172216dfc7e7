import type { Node } from "../../../gen/staragent/v1/node_service_pb.js";
import { type Session, SessionStatus, SessionType } from "../../../gen/staragent/v1/session_pb.js";
import { CLI_KEYS, type CliKey, cliKey, cliName } from "./cli-table.js";
import { DEFAULT_LIST_VIEW, folderOf, isUnmanagedShell, type ListView, sortSessions } from "./list-view.js";
import { nodeId } from "./routes.js";
import { reasonText } from "./session-labels.js";

/** The status choices of the list's filter. */
export const STATUS_FILTERS = ["all", "review", "working", "idle"] as const;
/** The CLI choices of the list's filter. */
export const CLI_FILTERS: readonly ("all" | CliKey)[] = ["all", ...CLI_KEYS];

/** What the session list shows; kept in the address bar so a reload or a shared link keeps it. */
export interface SessionFilter {
  readonly status: (typeof STATUS_FILTERS)[number];
  readonly cli: "all" | CliKey;
  /** A node id, or "all". */
  readonly node: string;
  /** Words that must all appear in the name, cwd, command, CLI or reason (any case). */
  readonly query: string;
}

export const NO_FILTER: SessionFilter = { status: "all", cli: "all", node: "all", query: "" };

/** Reads the filter from a query string (unknown values fall back to "all"). */
export function parseFilter(search: string): SessionFilter {
  const p = new URLSearchParams(search);
  const status = p.get("status");
  const cli = p.get("cli");
  return {
    status: (STATUS_FILTERS as readonly string[]).includes(status ?? "") ? (status as SessionFilter["status"]) : "all",
    cli: (CLI_FILTERS as readonly string[]).includes(cli ?? "") ? (cli as SessionFilter["cli"]) : "all",
    node: p.get("node") || "all",
    query: p.get("q") ?? "",
  };
}

/** The query string of a filter ("" when nothing is filtered). */
export function filterSearch(f: SessionFilter): string {
  const p = new URLSearchParams();
  if (f.status !== "all") p.set("status", f.status);
  if (f.cli !== "all") p.set("cli", f.cli);
  if (f.node !== "all") p.set("node", f.node);
  if (f.query !== "") p.set("q", f.query);
  const s = p.toString();
  return s === "" ? "" : `?${s}`;
}

/** True when the filter hides something. */
export function isFiltered(f: SessionFilter): boolean {
  return f.status !== "all" || f.cli !== "all" || f.node !== "all" || f.query.trim() !== "";
}

/** One row of the session list: a node's header, the start of its system sessions, or a session. */
export type ListRow =
  | {
      readonly kind: "node";
      readonly key: string;
      readonly node: string;
      readonly label: string;
      readonly info: Node | undefined;
      readonly reachable: boolean;
      readonly shown: number;
    }
  | { readonly kind: "system"; readonly key: string; readonly node: string; readonly shown: number }
  | { readonly kind: "folder"; readonly key: string; readonly folder: string; readonly shown: number }
  | { readonly kind: "session"; readonly key: string; readonly session: Session };

/** Counts per status of the sessions that pass every filter but the status one (for the filter buttons). */
export type StatusCounts = Record<(typeof STATUS_FILTERS)[number], number>;

/**
 * The rows of the session list: grouped by node (the Hub's own first, then by name), agent sessions
 * first and system sessions apart after them, each group in name order so rows do not jump around as
 * statuses change. Nodes without sessions still get a header when nothing is filtered, so an empty or
 * unreachable node is visible. `view` (the person's layout) may order each group by attention, group
 * by folder instead (across nodes; system sessions last), and leave out unmanaged shells.
 */
export function buildRows(
  sessions: Iterable<Session>,
  nodes: readonly Node[],
  unreachable: ReadonlySet<string>,
  filter: SessionFilter,
  view: ListView = DEFAULT_LIST_VIEW,
): { rows: ListRow[]; counts: StatusCounts; sessionRows: number } {
  const words = filter.query
    .toLowerCase()
    .split(/\s+/)
    .filter((w) => w !== "");
  const counts: StatusCounts = { all: 0, review: 0, working: 0, idle: 0 };
  const byNode = new Map<string, Session[]>();
  for (const s of sessions) {
    if (view.hideShells && isUnmanagedShell(s)) continue;
    if (filter.node !== "all" && s.node !== filter.node) continue;
    if (filter.cli !== "all" && cliKey(s.cli) !== filter.cli) continue;
    if (words.length > 0 && !matchesWords(s, words)) continue;
    counts.all++;
    const key = statusKey(s.status);
    if (key) counts[key]++;
    if (filter.status !== "all" && key !== filter.status) continue;
    let list = byNode.get(s.node);
    if (!list) {
      list = [];
      byNode.set(s.node, list);
    }
    list.push(s);
  }
  if (view.group === "folder") return { ...byFolder([...byNode.values()].flat(), view), counts };
  const nodeOrder: string[] = nodes.map((n) => nodeId(n.name));
  for (const id of [...byNode.keys()].sort()) if (!nodeOrder.includes(id)) nodeOrder.push(id);
  const infoById = new Map(nodes.map((n) => [nodeId(n.name), n]));
  const filtered = isFiltered(filter);
  const rows: ListRow[] = [];
  let sessionRows = 0;
  for (const id of nodeOrder) {
    if (filter.node !== "all" && id !== filter.node) continue;
    const list = byNode.get(id) ?? [];
    if (list.length === 0 && filtered) continue;
    sortSessions(list, view.sort);
    const info = infoById.get(id);
    rows.push({
      kind: "node",
      key: `node:${id}`,
      node: id,
      label: info?.displayName && info.displayName !== id ? `${id} · ${info.displayName}` : id,
      info,
      reachable: !unreachable.has(`nodes/${id}`),
      shown: list.length,
    });
    const system: Session[] = [];
    for (const s of list) {
      if (s.type === SessionType.SYSTEM) system.push(s);
      else rows.push({ kind: "session", key: s.name, session: s });
    }
    if (system.length > 0) {
      rows.push({ kind: "system", key: `system:${id}`, node: id, shown: system.length });
      for (const s of system) rows.push({ kind: "session", key: s.name, session: s });
    }
    sessionRows += list.length;
  }
  return { rows, counts, sessionRows };
}

/** The rows grouped by folder: a header per folder (in name order), system sessions apart at the end. */
function byFolder(list: Session[], view: ListView): { rows: ListRow[]; sessionRows: number } {
  const groups = new Map<string, Session[]>();
  const system: Session[] = [];
  for (const s of list) {
    if (s.type === SessionType.SYSTEM) {
      system.push(s);
      continue;
    }
    const folder = folderOf(s);
    const group = groups.get(folder) ?? [];
    group.push(s);
    groups.set(folder, group);
  }
  const rows: ListRow[] = [];
  for (const folder of [...groups.keys()].sort()) {
    const group = sortSessions(groups.get(folder) ?? [], view.sort);
    rows.push({ kind: "folder", key: `folder:${folder}`, folder, shown: group.length });
    for (const s of group) rows.push({ kind: "session", key: s.name, session: s });
  }
  if (system.length > 0) {
    rows.push({ kind: "system", key: "system:all", node: "", shown: system.length });
    for (const s of sortSessions(system, view.sort)) rows.push({ kind: "session", key: s.name, session: s });
  }
  return { rows, sessionRows: list.length };
}

function statusKey(status: SessionStatus): "review" | "working" | "idle" | undefined {
  if (status === SessionStatus.REVIEW) return "review";
  if (status === SessionStatus.WORKING) return "working";
  if (status === SessionStatus.IDLE) return "idle";
  return undefined;
}

function matchesWords(s: Session, words: string[]): boolean {
  const text = `${s.tmuxSession} ${s.node} ${s.cwd} ${s.command} ${cliName(s.cli)} ${reasonText(s)}`.toLowerCase();
  return words.every((w) => text.includes(w));
}
