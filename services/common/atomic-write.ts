import { mkdir, open, rename, unlink } from "node:fs/promises";
import { dirname } from "node:path";

/** Tells apart the temporary files of writes this process makes at the same time. */
let writeCount = 0;

/**
 * Replaces `path` with `text` so that no reader and no crash ever sees half of it: written to a new
 * temporary file beside it (created exclusively, so no link in its place is followed) with exactly
 * `mode`, synced to disk, then renamed over `path`. The folder is made (0700) when missing. On failure
 * the temporary file is removed and the error thrown; `path` is as it was. Every file StarAgent keeps
 * (state files, tokens, a system service's secrets) is written this one way.
 */
export async function writeFileAtomic(path: string, text: string, mode: number): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.tmp-${process.pid}-${Date.now()}-${writeCount++}`;
  try {
    const handle = await open(tmp, "wx", mode);
    try {
      // The mode asked for, whatever the umask.
      await handle.chmod(mode);
      await handle.writeFile(text, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
}
