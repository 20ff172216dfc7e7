import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";

/**
 * A new temporary folder (named `prefix` and a random tail) for each test of the suite this is called
 * in, handed to `use` before the test and removed after it, even when the test failed: the setup and
 * cleanup many unit tests need, written once so none forgets the removal.
 */
export function eachTempDir(prefix: string, use: (dir: string) => void): void {
  let dir: string | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), prefix));
    use(dir);
  });
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });
}
