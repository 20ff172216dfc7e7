import { constants, type Dirent } from "node:fs";
import { lstat, open, readdir, readlink } from "node:fs/promises";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type FileEntry,
  FileEntrySchema,
  FileKind,
  type ListFilesResponse,
  ListFilesResponseSchema,
  type ReadFileResponse,
  ReadFileResponseSchema,
} from "../../../gen/staragent/v1/workspace_service_pb.js";
import { paginate } from "../../common/pagination.js";
import { confine, isInside, looksSecret } from "./confine.js";
import { BINARY_MIME, SNIFF_BYTES, sniffMime } from "./sniff.js";

/** Most bytes of a text file ReadFile returns. */
export const MAX_TEXT_BYTES = 1024 * 1024;
/** Most bytes of an image ReadFile returns. */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

function kindOf(entry: Dirent): FileKind {
  if (entry.isDirectory()) return FileKind.FOLDER;
  if (entry.isFile()) return FileKind.FILE;
  if (entry.isSymbolicLink()) return FileKind.SYMLINK;
  return FileKind.OTHER;
}

/** ListFiles: one folder under the session's folder, folders first, `.git` left out, one page. */
export async function listFiles(
  cwd: string,
  request: { path: string; pageSize: number; pageToken: string; home?: string },
): Promise<ListFilesResponse> {
  const folder = await confine(cwd, request.path, { refuseSecrets: false, home: request.home });
  const info = await lstat(folder.real);
  if (!info.isDirectory()) {
    throw new ConnectError(`${JSON.stringify(folder.relative)} is not a folder`, Code.FailedPrecondition);
  }
  const dirents = (await readdir(folder.real, { withFileTypes: true })).filter((d) => d.name !== ".git");
  const { page, nextPageToken } = paginate(
    dirents,
    (d) => `${d.isDirectory() ? "0" : "1"}${d.name}`,
    request.pageSize,
    request.pageToken,
    folder.relative,
  );
  const entries: FileEntry[] = [];
  for (const d of page) {
    const path = folder.relative === "" ? d.name : `${folder.relative}/${d.name}`;
    const stats = await lstat(join(folder.real, d.name)).catch(() => undefined);
    const kind = kindOf(d);
    entries.push(
      create(FileEntrySchema, {
        name: d.name,
        path,
        kind,
        size: kind === FileKind.FOLDER ? 0n : BigInt(stats?.size ?? 0),
        modifyTime: stats ? timestampFromDate(stats.mtime) : undefined,
        secret: looksSecret(kind === FileKind.FOLDER ? `${path}/x` : path),
      }),
    );
  }
  return create(ListFilesResponseSchema, { entries, nextPageToken, root: folder.root });
}

/**
 * ReadFile: the start of one regular file under the session's folder, typed by its bytes: text up to
 * MAX_TEXT_BYTES, images up to MAX_IMAGE_BYTES, anything else only its type and size. Opened without
 * following a last symlink and checked again once open, so a link swapped in after the check is
 * still refused.
 */
export async function readFile(
  cwd: string,
  request: { path: string; maxBytes: bigint; home?: string },
): Promise<ReadFileResponse> {
  if (request.maxBytes < 0n) throw new ConnectError("max_bytes: must not be negative", Code.InvalidArgument);
  const file = await confine(cwd, request.path, { refuseSecrets: true, home: request.home });
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file.real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ELOOP") {
      throw new ConnectError(
        `path ${JSON.stringify(file.relative)}: changed into a symlink while being read`,
        Code.PermissionDenied,
      );
    }
    if (code === "EISDIR")
      throw new ConnectError(`${JSON.stringify(file.relative)} is a folder`, Code.FailedPrecondition);
    throw new ConnectError(
      `${JSON.stringify(file.relative)} cannot be read: ${code ?? "error"}`,
      Code.FailedPrecondition,
    );
  }
  try {
    const opened = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => file.real);
    if (!isInside(file.root, opened)) {
      throw new ConnectError(
        `path ${JSON.stringify(file.relative)}: leads outside the session's folder`,
        Code.PermissionDenied,
      );
    }
    const info = await handle.stat();
    if (info.isDirectory())
      throw new ConnectError(`${JSON.stringify(file.relative)} is a folder`, Code.FailedPrecondition);
    if (!info.isFile()) {
      throw new ConnectError(`${JSON.stringify(file.relative)} is not a regular file`, Code.FailedPrecondition);
    }
    const head = Buffer.alloc(Math.min(SNIFF_BYTES, info.size));
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    const sample = head.subarray(0, bytesRead);
    const mime = sniffMime(sample, file.relative, bytesRead < info.size);
    const limit = mime === BINARY_MIME ? 0 : mime.startsWith("image/") ? MAX_IMAGE_BYTES : MAX_TEXT_BYTES;
    const wanted = request.maxBytes > 0n && request.maxBytes < BigInt(limit) ? Number(request.maxBytes) : limit;
    const length = Math.min(wanted, info.size);
    const content = Buffer.alloc(length);
    let read = 0;
    while (read < length) {
      const r = await handle.read(content, read, length - read, read);
      if (r.bytesRead === 0) break;
      read += r.bytesRead;
    }
    return create(ReadFileResponseSchema, {
      content: content.subarray(0, read),
      mimeType: mime,
      truncated: info.size > read && mime !== BINARY_MIME,
      size: BigInt(info.size),
    });
  } finally {
    await handle.close();
  }
}
