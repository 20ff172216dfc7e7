/** Which part of a session the view shows. */
export type SessionTab = "terminal" | "chat" | "changes" | "files";

/** The tabs that have a path segment of their own (the terminal is the session's plain path). */
const NAMED_TABS: ReadonlySet<string> = new Set(["chat", "changes", "files"]);

/** Where the dashboard is: one of its pages, parsed from and written to the address bar. */
export type Route =
  | {
      readonly page: "sessions";
      readonly session?: { readonly node: string; readonly id: string };
      readonly tab: SessionTab;
    }
  | { readonly page: "nodes" }
  | { readonly page: "login"; readonly next: string };

/** Parses a path (with its query) into a route; anything unknown is the session list. */
export function parseRoute(pathname: string, search = ""): Route {
  const parts = pathname
    .split("/")
    .filter((p) => p !== "")
    .map(safeDecode);
  if (parts[0] === "login") {
    const next = new URLSearchParams(search).get("next") ?? "/";
    return { page: "login", next: isLocalPath(next) ? next : "/" };
  }
  if (parts[0] === "nodes" && parts.length === 1) return { page: "nodes" };
  if (parts[0] === "sessions" && parts.length >= 3 && parts[1] && parts[2]) {
    return {
      page: "sessions",
      session: { node: parts[1], id: parts[2] },
      tab: parts[3] !== undefined && NAMED_TABS.has(parts[3]) ? (parts[3] as SessionTab) : "terminal",
    };
  }
  return { page: "sessions", tab: "terminal" };
}

/** The path of a session's view. */
export function sessionPath(node: string, id: string, tab: SessionTab = "terminal"): string {
  const base = `/sessions/${encodeURIComponent(node)}/${encodeURIComponent(id)}`;
  return tab === "terminal" ? base : `${base}/${tab}`;
}

/** The resource name of a session (`nodes/{node}/sessions/{id}`). */
export function sessionName(node: string, id: string): string {
  return `nodes/${node}/sessions/${id}`;
}

/** The node id and tmux session of a resource name, or undefined for anything else. */
export function splitSessionName(name: string): { node: string; id: string } | undefined {
  const m = /^nodes\/([^/]+)\/sessions\/(.+)$/.exec(name);
  return m?.[1] && m[2] ? { node: m[1], id: m[2] } : undefined;
}

/** The node id of `nodes/{node}`. */
export function nodeId(resourceName: string): string {
  return resourceName.startsWith("nodes/") ? resourceName.slice("nodes/".length) : resourceName;
}

/** Only same-site paths are followed after login, so a crafted link cannot send people elsewhere. */
export function isLocalPath(path: string): boolean {
  return path.startsWith("/") && !path.startsWith("//") && !path.startsWith("/\\") && !path.startsWith("/login");
}

function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}
