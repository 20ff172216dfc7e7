/** Folders remembered per node as "recent" in the create dialog (newest first). */
export const MAX_RECENT_FOLDERS = 8;

/** One remembered folder, on the node it is a folder of (a path means nothing on another machine). */
export interface RecentFolder {
  readonly node: string;
  readonly cwd: string;
}

/** A recent folder as the dialog offers it: the path, and the shortest end of it that tells it apart. */
export interface RecentChoice {
  readonly cwd: string;
  readonly label: string;
}

/**
 * The remembered folders from what the browser stored, keeping only well-formed entries. Entries of
 * the older form (a bare path, no node) are dropped: offered on the wrong node they would start a
 * session in a folder that does not exist there, or worse, in another one of the same name.
 */
export function parseRecentFolders(stored: unknown): RecentFolder[] {
  if (!Array.isArray(stored)) return [];
  return stored.flatMap((e: unknown) => {
    const r = e as Partial<RecentFolder> | null;
    return r && typeof r === "object" && typeof r.node === "string" && typeof r.cwd === "string" && r.cwd !== ""
      ? [{ node: r.node, cwd: r.cwd }]
      : [];
  });
}

/** The list with `cwd` on `node` first (moved there if it was known), at most MAX_RECENT_FOLDERS per node. */
export function rememberFolder(list: readonly RecentFolder[], node: string, cwd: string): RecentFolder[] {
  const next = [{ node, cwd }, ...list.filter((r) => r.node !== node || r.cwd !== cwd)];
  const perNode = new Map<string, number>();
  return next.filter((r) => {
    const n = (perNode.get(r.node) ?? 0) + 1;
    perNode.set(r.node, n);
    return n <= MAX_RECENT_FOLDERS;
  });
}

/**
 * The folders remembered on `node`, newest first, each labelled by its last path segment, or by as
 * many of its last segments as it takes to tell it from the others shown (`a/proj`, `b/proj`).
 */
export function recentOn(list: readonly RecentFolder[], node: string): RecentChoice[] {
  const paths = list.filter((r) => r.node === node).map((r) => r.cwd);
  const segments = paths.map((p) => p.split("/").filter(Boolean));
  const suffix = (parts: string[], n: number) => parts.slice(-n).join("/");
  return paths.map((cwd, i) => {
    const parts = segments[i] ?? [];
    let n = 1;
    while (n < parts.length && segments.some((o, j) => j !== i && suffix(o, n) === suffix(parts, n))) n++;
    return { cwd, label: parts.length === 0 ? cwd : suffix(parts, n) };
  });
}
