import { realpath } from "node:fs/promises";
import { isAbsolute, join, relative, sep } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";

/**
 * Confinement of workspace paths to a session's folder (docs/workspace.md): a path comes from the
 * caller, so it is checked as text first (no NUL, not absolute, no `..`, not over-long), then resolved
 * with every symlink followed and must still be inside the root. Files that hold secrets by convention
 * may be listed but never read.
 */

/** Longest path a caller may send, in characters (Linux's PATH_MAX). */
export const MAX_PATH_CHARS = 4096;

/** Why secret-looking files are refused, as the caller sees it. */
export const SECRET_MESSAGE = "looks like a secret";

/** Folders whose every file counts as a secret (credentials by convention). */
const SECRET_FOLDERS: ReadonlySet<string> = new Set([".ssh", ".aws", ".gnupg"]);

/** True when a name or path looks like it holds secrets: `.env*`, `*.pem`, `*.key`, `id_*` keys, `.netrc`, or inside `.ssh`/`.aws`/`.gnupg`. */
export function looksSecret(path: string): boolean {
  const parts = path.split(/[\\/]/).filter((p) => p !== "");
  if (parts.some((p) => SECRET_FOLDERS.has(p))) return true;
  const name = parts[parts.length - 1] ?? "";
  return (
    name.startsWith(".env") ||
    name.endsWith(".pem") ||
    name.endsWith(".key") ||
    name === ".netrc" ||
    (name.startsWith("id_") && !name.endsWith(".pub"))
  );
}

function denied(path: string, rule: string): ConnectError {
  return new ConnectError(`path ${JSON.stringify(shorten(path))}: ${rule}`, Code.PermissionDenied);
}

function shorten(path: string): string {
  return path.length > 120 ? `${path.slice(0, 120)}…` : path;
}

/**
 * Checks a caller's relative path as text: PERMISSION_DENIED naming the rule for NUL, an absolute
 * path, a `..` segment or a path over MAX_PATH_CHARS; the path split into its segments otherwise
 * (`""` and `.` name the root).
 */
export function checkRelativePath(path: string): string[] {
  if (path.includes("\0")) return refuse(denied(path.replaceAll("\0", "\\0"), "contains a NUL character"));
  if (path.length > MAX_PATH_CHARS) {
    return refuse(denied(path, `is longer than ${MAX_PATH_CHARS} characters`));
  }
  if (isAbsolute(path) || path.startsWith("\\")) {
    return refuse(denied(path, "is absolute; paths are relative to the session's folder"));
  }
  const parts = path.split(/[\\/]/).filter((p) => p !== "" && p !== ".");
  if (parts.includes("..")) return refuse(denied(path, 'contains ".."; paths stay inside the session\'s folder'));
  return parts;
}

function refuse(err: ConnectError): never {
  throw err;
}

/** True when `child` is `parent` or inside it (both resolved, absolute). */
export function isInside(parent: string, child: string): boolean {
  return child === parent || child.startsWith(parent.endsWith(sep) ? parent : parent + sep);
}

/** A path resolved inside the root. */
export interface ConfinedPath {
  /** The resolved root (realpath of the session's folder). */
  readonly root: string;
  /** The path as the caller named it, normalized (`a/b`), `""` for the root. */
  readonly relative: string;
  /** The file's real absolute path (every symlink followed). */
  readonly real: string;
}

/** What confinement needs to know besides the path. */
export interface ConfineOptions {
  /** `$STARAGENT_HOME`: nothing inside it is ever read (tokens, state). */
  readonly home?: string;
  /** Refuse secret-looking files (reads); listing passes false. */
  readonly refuseSecrets: boolean;
  /** The path may name nothing (a deleted file's diff): then its nearest existing folder is confined. */
  readonly mayBeMissing?: boolean;
}

/**
 * Resolves `path` under `root` and confines it: the textual rules first, then `realpath` (symlinks
 * followed) must stay inside the root's realpath, and for reads the path, as named and as resolved,
 * must not look like a secret nor lie in `$STARAGENT_HOME` or a `.git` folder. NOT_FOUND when nothing
 * is there.
 */
export async function confine(rootPath: string, path: string, options: ConfineOptions): Promise<ConfinedPath> {
  const parts = checkRelativePath(path);
  const rel = parts.join("/");
  if (parts.includes(".git")) throw denied(path, "is inside .git, which is not shown");
  if (options.refuseSecrets && looksSecret(rel)) throw denied(path, SECRET_MESSAGE);
  const root = await realpath(rootPath).catch(() => {
    throw new ConnectError(`the session's folder ${rootPath} no longer exists`, Code.FailedPrecondition);
  });
  let real: string | undefined;
  // The nearest existing ancestor when the path itself may be missing: it must be inside the root too.
  for (let n = parts.length; real === undefined; n--) {
    try {
      real = join(await realpath(join(root, ...parts.slice(0, n))), ...parts.slice(n));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ELOOP") throw denied(path, "has a symlink loop");
      if (code === "ENAMETOOLONG") throw denied(path, "is longer than the system allows");
      if (!options.mayBeMissing || n === 0 || (code !== "ENOENT" && code !== "ENOTDIR")) {
        throw new ConnectError(`${JSON.stringify(shorten(rel))} does not exist in the session's folder`, Code.NotFound);
      }
    }
  }
  if (!isInside(root, real)) throw denied(path, "leads outside the session's folder through a symlink");
  const inside = relative(root, real);
  if (options.refuseSecrets) {
    if (looksSecret(inside)) throw denied(path, SECRET_MESSAGE);
    if (inside.split(sep).includes(".git")) throw denied(path, "is inside .git, which is not shown");
    if (options.home !== undefined) {
      const home = await realpath(options.home).catch(() => options.home as string);
      if (isInside(home, real)) throw denied(path, `${SECRET_MESSAGE} (StarAgent's own folder)`);
    }
  }
  return { root, relative: rel, real };
}
