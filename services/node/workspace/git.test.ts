import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConnectError } from "@connectrpc/connect";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GIT_NICENESS, runGit } from "./git.js";

describe("runGit", () => {
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
    const { stdout } = await runGit(dir, ["-c", "alias.niceness=!cat /proc/$$/stat", "niceness"]);
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
    const failure = await runGit(dir, ["status"]).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(ConnectError);
    expect((failure as ConnectError).rawMessage).toBe("git could not be started: it is not installed on this machine");
  });
});
