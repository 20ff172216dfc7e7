import { mkdir, mkdtemp, realpath, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChangeKind } from "../../../gen/staragent/v1/workspace_service_pb.js";
import { GIT_TEST_ENV, git } from "../../../test/support/git.js";
import { getChanges, getFileDiff } from "./changes.js";
import { type GitRun, runGit } from "./git.js";

const LINES = Array.from({ length: 12 }, (_, i) => `line ${i + 1}`);

let dir: string;
let savedEnv: NodeJS.ProcessEnv;

beforeAll(async () => {
  savedEnv = { ...process.env };
  // StarAgent's git calls inherit the environment: no user or system configuration here either.
  Object.assign(process.env, { GIT_CONFIG_GLOBAL: GIT_TEST_ENV.GIT_CONFIG_GLOBAL, GIT_CONFIG_NOSYSTEM: "1" });
  dir = await realpath(await mkdtemp(join(tmpdir(), "sa-changes-")));
});

afterAll(async () => {
  process.env = savedEnv;
  await rm(dir, { recursive: true, force: true });
});

/** A repository with `old.txt` committed, then moved with `git mv` to `new.txt` and edited. */
async function renamedRepo(name: string, stageEdit: boolean): Promise<string> {
  const repo = join(dir, name);
  await mkdir(join(repo, "src"), { recursive: true });
  git(repo, "init", "-q", "-b", "main");
  await writeFile(join(repo, "src", "old.txt"), `${LINES.join("\n")}\n`);
  git(repo, "add", ".");
  git(repo, "commit", "-qm", "first");
  git(repo, "mv", "src/old.txt", "src/new.txt");
  await writeFile(join(repo, "src", "new.txt"), `${LINES.join("\n").replace("line 5", "line FIVE")}\n`);
  if (stageEdit) git(repo, "add", "src/new.txt");
  return repo;
}

describe("GetFileDiff of a staged rename, on a real git repository", () => {
  it("shows the rename with its real changes, staged and as the work tree has it", async () => {
    const repo = await renamedRepo("staged", true);
    const changes = await getChanges(repo);
    expect(changes.files.map((f) => [f.path, ChangeKind[f.change], f.previousPath])).toEqual([
      ["src/new.txt", "RENAMED", "src/old.txt"],
    ]);
    for (const staged of [true, false]) {
      const diff = await getFileDiff(repo, { path: "src/new.txt", staged });
      expect(diff.diff).toContain("rename from src/old.txt\nrename to src/new.txt\n");
      expect(diff.diff).toContain("\n-line 5\n+line FIVE\n");
      expect([diff.linesAdded, diff.linesRemoved]).toEqual([1, 1]);
    }
  });

  it("from a session in a subfolder, and with the edit left unstaged", async () => {
    const repo = await renamedRepo("unstaged", false);
    const cwd = join(repo, "src");
    const staged = await getFileDiff(cwd, { path: "new.txt", staged: true });
    expect(staged.diff).toContain("rename from src/old.txt\nrename to src/new.txt\n");
    expect([staged.linesAdded, staged.linesRemoved]).toEqual([0, 0]);
    const all = await getFileDiff(cwd, { path: "new.txt", staged: false });
    expect(all.diff).toContain("rename from src/old.txt\n");
    expect(all.diff).toContain("\n-line 5\n+line FIVE\n");
    expect([all.linesAdded, all.linesRemoved]).toEqual([1, 1]);
  });

  it("does not read a renamed file's old path outside the session's folder", async () => {
    const repo = await renamedRepo("outside", true);
    await mkdir(join(repo, "other"));
    git(repo, "mv", "src/new.txt", "other/moved.txt");
    const diff = await getFileDiff(join(repo, "other"), { path: "moved.txt", staged: true });
    expect(diff.diff).not.toContain("rename from");
    expect(diff.diff).toContain("new file mode");
  });
});

describe("GetChanges' line counts, remembered per file", () => {
  /** `runGit` recording each call's subcommand and paths. */
  function recordingGit() {
    const calls: string[][] = [];
    const run: GitRun = (cwd, args, options) => {
      calls.push([...args]);
      return runGit(cwd, args, options);
    };
    return { calls, run, diffs: () => calls.filter((a) => a[0] === "diff") };
  }

  /** Writes `text` into `path` with a modification time `ageMs` in the past (older than the racy window). */
  async function writeAged(path: string, text: string, ageMs: number): Promise<void> {
    await writeFile(path, text);
    const then = new Date(Date.now() - ageMs);
    await utimes(path, then, then);
  }

  it("diffs a file again only when it or its record changed, and counts it right each time", async () => {
    const repo = join(dir, "counted");
    await mkdir(repo, { recursive: true });
    git(repo, "init", "-q", "-b", "main");
    await writeFile(join(repo, "a.txt"), `${LINES.join("\n")}\n`);
    await writeFile(join(repo, "b.txt"), `${LINES.join("\n")}\n`);
    git(repo, "add", ".");
    git(repo, "commit", "-qm", "first");
    await writeAged(join(repo, "a.txt"), `${LINES.join("\n")}\nadded\n`, 60_000);
    await writeAged(join(repo, "b.txt"), `${LINES.slice(1).join("\n")}\n`, 60_000);
    const lines = (changes: Awaited<ReturnType<typeof getChanges>>) =>
      Object.fromEntries(changes.files.map((f) => [f.path, [f.linesAdded, f.linesRemoved]]));

    const git1 = recordingGit();
    expect(lines(await getChanges(repo, undefined, git1.run))).toEqual({ "a.txt": [1, 0], "b.txt": [0, 1] });
    expect(git1.diffs()).toHaveLength(1);

    // Nothing changed: the counts come back without a diff.
    const git2 = recordingGit();
    expect(lines(await getChanges(repo, undefined, git2.run))).toEqual({ "a.txt": [1, 0], "b.txt": [0, 1] });
    expect(git2.diffs()).toEqual([]);

    // a.txt rewritten (same size, another old time): only it is diffed again, and counted anew.
    await writeAged(join(repo, "a.txt"), `${LINES.join("\n")}\nADDED\n`, 30_000);
    const git3 = recordingGit();
    expect(lines(await getChanges(repo, undefined, git3.run))).toEqual({ "a.txt": [1, 0], "b.txt": [0, 1] });
    expect(git3.diffs().map((a) => a.slice(a.indexOf("--") + 1))).toEqual([["a.txt"]]);

    // b.txt staged: its record's index side changed, so it is diffed again although the file is not.
    git(repo, "add", "b.txt");
    const git4 = recordingGit();
    expect(lines(await getChanges(repo, undefined, git4.run))).toEqual({ "a.txt": [1, 0], "b.txt": [0, 1] });
    expect(git4.diffs().map((a) => a.slice(a.indexOf("--") + 1))).toEqual([["b.txt"]]);

    // A file written just now is counted at every call (its time cannot tell a second write apart).
    await writeFile(join(repo, "a.txt"), `${LINES.join("\n")}\nmore\nlines\n`);
    for (const expected of [
      [2, 0],
      [2, 0],
    ]) {
      const fresh = recordingGit();
      expect(lines(await getChanges(repo, undefined, fresh.run))["a.txt"]).toEqual(expected);
      expect(fresh.diffs().map((a) => a.slice(a.indexOf("--") + 1))).toEqual([["a.txt"]]);
    }
  });
});
