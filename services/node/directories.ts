import type { Dirent } from "node:fs";
import { mkdir, open, readdir, realpath, stat } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { type Directory, DirectorySchema } from "../../gen/staragent/v1/session_service_pb.js";
import { paginate } from "../common/pagination.js";
import { MAX_CWD_BYTES } from "./create-session-input.js";

/** Largest `.git` file or `HEAD` read for a folder's branch: both are one short line. */
const MAX_GIT_POINTER_BYTES = 4096;
/** Entries of one folder looked at, at most: a folder of millions of entries is not read whole. */
const MAX_ENTRIES_READ = 20_000;

/** C0 controls, DEL and C1 controls: such a path could not be shown or typed back reliably. */
const CONTROL_CHARACTER = /\p{Cc}/u;

/** What the folder operations of one machine need. */
export interface DirectoriesOptions {
  /** The node user's home folder: where a listing without a path starts. */
  readonly userHome: string;
  /** `$STARAGENT_HOME`: nothing is created in it. */
  readonly stateHome: string;
}

/**
 * The folders of one machine, for picking a session's working folder (ListDirectories,
 * CreateDirectory). Only folders are listed; for each, whether it is a git repository and its branch,
 * read from `.git/HEAD` (no git process per folder). Paths are absolute, without control characters.
 */
export class Directories {
  constructor(private readonly options: DirectoriesOptions) {}

  /** ListDirectories: one page of the folders under `path` (the home folder when empty), ordered by name. */
  async list(path: string, pageSize: number, pageToken: string, showHidden: boolean) {
    const folder = path === "" ? this.options.userHome : checkPath(path, "path");
    const info = await stat(folder).catch((err: unknown) => {
      throw fsError(err, folder);
    });
    if (!info.isDirectory()) {
      throw new ConnectError(`path: ${JSON.stringify(folder)} is not a folder`, Code.FailedPrecondition);
    }
    let entries: Dirent[];
    try {
      entries = await readdir(folder, { withFileTypes: true });
    } catch (err) {
      throw fsError(err, folder);
    }
    const names: string[] = [];
    for (const entry of entries.slice(0, MAX_ENTRIES_READ)) {
      if (!showHidden && entry.name.startsWith(".")) continue;
      if (CONTROL_CHARACTER.test(entry.name)) continue;
      if (entry.isDirectory()) names.push(entry.name);
      else if (entry.isSymbolicLink() && (await isFolder(join(folder, entry.name)))) names.push(entry.name);
    }
    const { page, nextPageToken } = paginate(names, (n) => n, pageSize, pageToken, `${folder}\0${showHidden}`);
    const directories = await Promise.all(page.map((name) => describe(join(folder, name))));
    const up = dirname(folder);
    return {
      directory: await describe(folder),
      directories,
      nextPageToken,
      parentPath: up === folder ? "" : up,
    };
  }

  /** CreateDirectory: makes one folder (its parent must exist), never under `$STARAGENT_HOME`. */
  async create(path: string): Promise<Directory> {
    const folder = checkPath(path, "path");
    const parent = dirname(folder);
    const realParent = await realpath(parent).catch((err: unknown) => {
      throw fsError(err, parent, "the parent folder ");
    });
    const realState = await realpath(this.options.stateHome).catch(() => resolve(this.options.stateHome));
    const target = join(realParent, basename(folder));
    if (target === realState || isInside(realState, target)) {
      throw new ConnectError(
        `path: ${JSON.stringify(folder)} is inside StarAgent's own folder (${realState}); choose a folder elsewhere`,
        Code.PermissionDenied,
      );
    }
    try {
      await mkdir(folder, { mode: 0o755 });
    } catch (err) {
      throw fsError(err, folder);
    }
    return describe(folder);
  }
}

/** An absolute path without control characters or `..` parts, normalised; INVALID_ARGUMENT naming `field`. */
function checkPath(path: string, field: string): string {
  const control = CONTROL_CHARACTER.exec(path);
  if (control) {
    const code = (control[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0");
    throw new ConnectError(
      `${field}: ${JSON.stringify(path)} contains a control character (U+${code}); paths with line breaks, tabs or escapes are not accepted`,
      Code.InvalidArgument,
    );
  }
  if (Buffer.byteLength(path) > MAX_CWD_BYTES) {
    throw new ConnectError(`${field}: longer than ${MAX_CWD_BYTES} bytes`, Code.InvalidArgument);
  }
  if (!isAbsolute(path)) {
    throw new ConnectError(`${field}: ${JSON.stringify(path)} is not an absolute path`, Code.InvalidArgument);
  }
  if (path.split(sep).includes("..")) {
    throw new ConnectError(
      `${field}: ${JSON.stringify(path)} has a ".." part; name the folder itself`,
      Code.InvalidArgument,
    );
  }
  return resolve(path);
}

function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
}

async function isFolder(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() === true;
}

/** A folder with its git facts: a `.git` folder, or a `.git` file pointing at a worktree's git folder. */
async function describe(path: string): Promise<Directory> {
  let gitDir: string | undefined;
  const dotGit = join(path, ".git");
  const info = await stat(dotGit).catch(() => undefined);
  if (info?.isDirectory()) gitDir = dotGit;
  else if (info?.isFile()) {
    const pointer = (await readSmall(dotGit)).match(/^gitdir: (.+)$/m)?.[1]?.trim();
    if (pointer) gitDir = resolve(path, pointer);
  }
  let branch = "";
  if (gitDir) branch = (await readSmall(join(gitDir, "HEAD"))).match(/^ref: refs\/heads\/(.+)$/m)?.[1]?.trim() ?? "";
  return create(DirectorySchema, {
    name: basename(path) || path,
    path,
    gitRepository: gitDir !== undefined,
    branch: CONTROL_CHARACTER.test(branch) ? "" : branch,
  });
}

/** The first MAX_GIT_POINTER_BYTES of a file as text; "" when it cannot be read. */
async function readSmall(path: string): Promise<string> {
  try {
    const handle = await open(path, "r");
    try {
      const buffer = Buffer.alloc(MAX_GIT_POINTER_BYTES);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
      return buffer.subarray(0, bytesRead).toString("utf8");
    } finally {
      await handle.close();
    }
  } catch {
    return "";
  }
}

/** A file-system failure as the contract's error, naming the path. */
function fsError(err: unknown, path: string, what = ""): ConnectError {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const shown = JSON.stringify(path);
  switch (code) {
    case "ENOENT":
      return new ConnectError(`${what}${shown} does not exist`, Code.NotFound);
    case "ENOTDIR":
      return new ConnectError(`${what}${shown} is not a folder`, Code.FailedPrecondition);
    case "EEXIST":
      return new ConnectError(`${shown} exists already`, Code.AlreadyExists);
    case "EACCES":
    case "EPERM":
    case "EROFS":
      return new ConnectError(
        `${what}${shown}: this node's user is not allowed to do that (${code})`,
        Code.PermissionDenied,
      );
    default:
      return new ConnectError(
        `${what}${shown}: ${(err as Error | undefined)?.message ?? String(err)}`,
        Code.Unavailable,
      );
  }
}
