import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConnectError } from "@connectrpc/connect";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GIT_NICENESS, GitError, type GitRun, GitShell, runGit } from "./git.js";

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
