import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { GIT_TEST_ENV, git } from "../../../test/support/git.js";
import { waitFor } from "../../../test/support/wait.js";
import { createLogger } from "../../common/log.js";
import { WORKSPACE_RECHECK_MS, WorkspaceTracker } from "./tracker.js";

/** The recheck interval the tests run with: short, and far from the settle time so the two cannot be confused. */
const TEST_RECHECK_MS = 400;
/** A settle time longer than any test: a look that a file watch caused would never run within it. */
const NEVER_MS = 600_000;

let dir: string;
let savedEnv: NodeJS.ProcessEnv;
const trackers: WorkspaceTracker[] = [];
const log = createLogger("test", "error", () => undefined);

beforeAll(async () => {
  savedEnv = { ...process.env };
  Object.assign(process.env, { GIT_CONFIG_GLOBAL: GIT_TEST_ENV.GIT_CONFIG_GLOBAL, GIT_CONFIG_NOSYSTEM: "1" });
  dir = await realpath(await mkdtemp(join(tmpdir(), "sa-tracker-")));
});

afterEach(() => {
  for (const t of trackers.splice(0)) t.close();
});

afterAll(async () => {
  process.env = savedEnv;
  await rm(dir, { recursive: true, force: true });
});

function tracker(timing: { settleMs: number; recheckMs: number }) {
  let changes = 0;
  const t = new WorkspaceTracker(() => changes++, log, timing);
  trackers.push(t);
  return { t, changes: () => changes };
}

describe("WorkspaceTracker's recheck of folders no watch covers", () => {
  it("is under a minute by default", () => {
    expect(WORKSPACE_RECHECK_MS).toBeLessThan(60_000);
  });

  it("finds an edit deep in an unwatched folder by its own timer, with nobody reading the model", async () => {
    const repo = join(dir, "deep");
    await mkdir(join(repo, "a", "b"), { recursive: true });
    git(repo, "init", "-q", "-b", "main");
    await writeFile(join(repo, "a", "b", "kept.txt"), "kept\n");
    git(repo, "add", ".");
    git(repo, "commit", "-qm", "first");
    // File watches would only call for a look after NEVER_MS: only the recheck can find the edit.
    const { t, changes } = tracker({ settleMs: NEVER_MS, recheckMs: TEST_RECHECK_MS });
    expect(t.lookup(repo).changedFiles).toBeUndefined();
    await waitFor(() => changes() === 1, "the first look");
    expect(t.lookup(repo)).toEqual({ changedFiles: 0, branch: "main" });
    await writeFile(join(repo, "a", "b", "kept.txt"), "edited\n");
    // Not lookup(): the model is read by nobody; the change must be announced through onChange.
    await waitFor(() => changes() === 2, "the recheck to find the edit", 10_000);
    expect(t.lookup(repo)).toEqual({ changedFiles: 1, branch: "main" });
  });
});
