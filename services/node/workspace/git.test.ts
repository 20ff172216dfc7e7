import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConnectError } from "@connectrpc/connect";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { waitFor } from "../../../test/support/wait.js";
import { GIT_NICENESS, GitError, type GitRun, GitShell, GitShellPool, runGit } from "./git.js";

/** Each way git runs: spawned per call, and through a GitShell (made after the test set its PATH). */
const RUNNERS: [string, () => { run: GitRun; close: () => void }][] = [
  ["runGit", () => ({ run: runGit, close: () => {} })],
  [
    "GitShell",
    () => {
      const shell = new GitShell();
      return { run: (cwd, args, options) => shell.run(cwd, args, options), close: () => shell.close() };
    },
  ],
  [
    "GitShellPool",
    () => {
      const pool = new GitShellPool();
      return { run: pool.run, close: () => pool.close() };
    },
  ],
];

describe.each(RUNNERS)("%s", (_name, runner) => {
  let dir: string;
  let path: string | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "sa-run-git-"));
    path = process.env.PATH;
  });
  afterEach(async () => {
    process.env.PATH = path;
    await rm(dir, { recursive: true, force: true });
  });

  it("runs git at GIT_NICENESS, and what git starts inherits it", async () => {
    // A shell alias (given on the command line, as a repository's config could not) prints the
    // `/proc/<pid>/stat` of the shell git started: its 19th field is the niceness.
    const git = runner();
    const { stdout } = await git.run(dir, ["-c", "alias.niceness=!cat /proc/$$/stat", "niceness"]).finally(git.close);
    const stat = stdout.toString("utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    expect(Number(fields[16])).toBe(GIT_NICENESS);
  });

  it("says git is not installed when it is not on the PATH", async () => {
    // Only `nice` on the PATH.
    const nice = (path ?? "")
      .split(":")
      .map((d) => join(d, "nice"))
      .find((p) => existsSync(p));
    if (!nice) throw new Error("no nice on the PATH");
    const bin = join(dir, "bin");
    await mkdir(bin);
    await symlink(nice, join(bin, "nice"));
    process.env.PATH = bin;
    const git = runner();
    const failure = await git
      .run(dir, ["status"])
      .catch((err: unknown) => err)
      .finally(git.close);
    expect(failure).toBeInstanceOf(ConnectError);
    expect((failure as ConnectError).rawMessage).toBe("git could not be started: it is not installed on this machine");
  });

  it("answers as git does: its output, its refusal with git's words, the exit codes asked for", async () => {
    const git = runner();
    try {
      await git.run(dir, ["init", "-q", "-b", "main"]);
      await writeFile(join(dir, "a file.txt"), "one\n");
      const status = await git.run(dir, ["status", "--porcelain=v2", "-z", "--", "."]);
      expect(status.stdout.toString("utf8")).toBe("? a file.txt\0");
      const refused = await git.run(dir, ["rev-parse", "--verify", "no-such-ref"]).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(GitError);
      expect((refused as GitError).message).toBe("git rev-parse failed: fatal: Needed a single revision");
      const diff = await git.run(dir, ["diff", "--no-index", "--numstat", "/dev/null", "a file.txt"], {
        okCodes: [0, 1],
      });
      expect(diff.code).toBe(1);
      expect(diff.stdout.toString("utf8")).toContain("1\t0\t");
      const cut = await git.run(dir, ["version"], { maxBytes: 4 });
      expect(cut).toMatchObject({ truncated: true, code: 0 });
      expect(cut.stdout.toString("utf8")).toBe("git ");
    } finally {
      git.close();
    }
  });
});

/** The `sh` processes this process started that are still running (the pool's shells). */
function shellChildren(): number[] {
  const children: number[] = [];
  for (const task of readdirSync(`/proc/${process.pid}/task`)) {
    const listed = readFileSync(`/proc/${process.pid}/task/${task}/children`, "utf8").trim();
    for (const pid of listed === "" ? [] : listed.split(" ").map(Number)) {
      const comm = (() => {
        try {
          return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
        } catch {
          return "";
        }
      })();
      if (comm === "sh") children.push(pid);
    }
  }
  return children;
}

describe("GitShellPool", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "sa-git-pool-"));
    await runGit(dir, ["init", "-q", "-b", "main"]);
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("runs calls on at most its shells, reused, spawns git for calls beyond them, and spawns after close", async () => {
    const before = new Set(shellChildren());
    const pool = new GitShellPool(2);
    try {
      // Five at once: two on the shells, three spawned; every answer is git's own.
      const answers = await Promise.all(
        Array.from({ length: 5 }, (_, i) => pool.run(dir, ["check-ref-format", "--branch", `topic-${i}`])),
      );
      expect(answers.map((a) => a.stdout.toString("utf8"))).toEqual(
        Array.from({ length: 5 }, (_, i) => `topic-${i}\n`),
      );
      const shells = shellChildren().filter((pid) => !before.has(pid));
      expect(shells).toHaveLength(2);
      // One after another: the same two shells, no more.
      for (let i = 0; i < 5; i++) await pool.run(dir, ["rev-parse", "--git-dir"]);
      expect(shellChildren().filter((pid) => !before.has(pid))).toEqual(shells);
    } finally {
      pool.close();
    }
    await waitFor(() => shellChildren().filter((pid) => !before.has(pid)).length === 0, "the shells to end");
    expect((await pool.run(dir, ["rev-parse", "--git-dir"])).stdout.toString("utf8")).toBe(".git\n");
    expect(shellChildren().filter((pid) => !before.has(pid))).toEqual([]);
  });
});
