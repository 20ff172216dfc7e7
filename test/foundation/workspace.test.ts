import { execFileSync, spawn } from "node:child_process";
import { constants } from "node:fs";
import { mkdir, mkdtemp, open, realpath, rm, symlink, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import type { Client } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Connectivity } from "../../gen/staragent/v1/node_service_pb.js";
import {
  ChangeKind,
  type FileChange,
  FileKind,
  WorkspaceService,
} from "../../gen/staragent/v1/workspace_service_pb.js";
import { git } from "../support/git.js";
import { runCli, type ServerProcess, startServerProcess } from "../support/servers.js";
import { createTestTmux, type TestTmux } from "../support/tmux.js";
import { waitFor } from "../support/wait.js";
import { failureOf, grpcClient, type HubFixture, startHubFixture, testToken } from "./hub-fixture.js";

async function newRepo(path: string): Promise<string> {
  await mkdir(path, { recursive: true });
  git(path, "init", "-q", "-b", "main");
  return path;
}

/** What a test compares of a change. */
function summary(f: FileChange) {
  return {
    path: f.path,
    change: ChangeKind[f.change],
    previous: f.previousPath,
    staged: f.staged,
    unstaged: f.unstaged,
    added: f.linesAdded,
    removed: f.linesRemoved,
    binary: f.binary,
    submodule: f.submodule,
  };
}

/**
 * A FIFO that counts who opened it: a child opens it for writing again and again, writing the number
 * of each open. The first reader reads "1"; so a test that reads "1" after refused calls knows that
 * nothing opened the file before it.
 */
async function openCountingFifo(path: string): Promise<{ firstReader(): Promise<string>; close(): void }> {
  execFileSync("mkfifo", [path]);
  const writer = spawn(
    process.execPath,
    [
      "-e",
      `const fs=require("fs");for(let n=1;;n++){let fd;try{fd=fs.openSync(${JSON.stringify(path)},"w");fs.writeSync(fd,n+"\\n")}catch{}finally{if(fd!==undefined)try{fs.closeSync(fd)}catch{}}}`,
    ],
    { stdio: "ignore" },
  );
  return {
    firstReader: async () => {
      const handle = await open(path, constants.O_RDONLY);
      try {
        const buf = Buffer.alloc(32);
        const { bytesRead } = await handle.read(buf, 0, buf.length, null);
        return buf.subarray(0, bytesRead).toString().split("\n")[0] ?? "";
      } finally {
        await handle.close();
      }
    },
    close: () => writer.kill("SIGKILL"),
  };
}

/**
 * The change-kinds test: two repositories built with some thirty git commands, a dozen calls through
 * the Hub to the Node, and five starts of the `staragent` command (4.6 s on a quiet machine, 16 s on a
 * CI run, over 30 s on a machine also building and running a browser).
 */
const KINDS_TEST_MS = 90_000;

describe("WorkspaceService through the Hub, for sessions on a remote Node, on real git repositories", () => {
  const nodeToken = testToken();
  let dir: string;
  let tmux: TestTmux | undefined;
  let node: ServerProcess | undefined;
  let f: HubFixture | undefined;
  let ws: Client<typeof WorkspaceService>;
  let fifo: Awaited<ReturnType<typeof openCountingFifo>> | undefined;
  const hub = () => f as HubFixture;
  const name = (session: string) => `nodes/n1/sessions/${session}`;

  /** A session on the Node whose pane sits in `cwd`. */
  async function session(id: string, cwd: string): Promise<string> {
    await hub().sessions.createSession({ parent: "nodes/n1", sessionId: id, cwd, command: ["sleep", "3600"] });
    return name(id);
  }

  beforeAll(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), "sa-workspace-")));
    tmux = createTestTmux();
    node = await startServerProcess({
      kind: "node",
      tmuxSocket: tmux.socketName,
      token: nodeToken,
      args: ["--name", "n1"],
    });
    f = await startHubFixture();
    await hub().nodes.addNode({ nodeId: "n1", url: node.url, token: nodeToken });
    await waitFor(
      async () =>
        (await hub().nodes.listNodes({})).nodes.find((n) => n.name === "nodes/n1")?.connectivity ===
        Connectivity.ONLINE,
      "n1 ONLINE",
    );
    ws = grpcClient(WorkspaceService, hub().hub.url, hub().hub.token);
  }, 60_000);

  afterAll(async () => {
    fifo?.close();
    await f?.close();
    await node?.stop();
    await tmux?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it(
    "lists every change kind with staged/unstaged parts, line counts, binary files, odd names and a submodule",
    async () => {
      const lib = await newRepo(join(dir, "lib"));
      await writeFile(join(lib, "lib.txt"), "lib\n");
      git(lib, "add", ".");
      git(lib, "commit", "-qm", "lib");
      const repo = await newRepo(join(dir, "kinds"));
      git(repo, "config", "status.renames", "copies");
      await writeFile(join(repo, "a.txt"), "one\ntwo\n");
      await writeFile(join(repo, "both.txt"), "1\n2\n3\n");
      await writeFile(join(repo, "rename me.txt"), "stays the same\n".repeat(5));
      await writeFile(join(repo, "gone.txt"), "bye\n");
      await writeFile(join(repo, "typechange"), "a file\n");
      await writeFile(join(repo, "orig.txt"), "copied content\n".repeat(10));
      await writeFile(join(repo, "img.bin"), Buffer.from([0, 1, 2, 3]));
      git(repo, "add", ".");
      git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "sub");
      git(repo, "commit", "-qm", "first");
      // The changes an agent might leave.
      await writeFile(join(repo, "a.txt"), "one\nTWO\nthree\n");
      await writeFile(join(repo, "both.txt"), "1\n2\n3\n4\n");
      git(repo, "add", "both.txt");
      await writeFile(join(repo, "both.txt"), "1\n2\n3\n4\n5\n");
      git(repo, "mv", "rename me.txt", "renamed ünï.txt");
      await unlink(join(repo, "gone.txt"));
      await unlink(join(repo, "typechange"));
      await symlink("a.txt", join(repo, "typechange"));
      await writeFile(join(repo, "copy.txt"), "copied content\n".repeat(10));
      await writeFile(join(repo, "orig.txt"), `${"copied content\n".repeat(10)}more\n`);
      git(repo, "add", "copy.txt", "orig.txt");
      await writeFile(join(repo, "added.txt"), "new\n");
      git(repo, "add", "added.txt");
      await writeFile(join(repo, "img.bin"), Buffer.from([0, 9, 9, 9, 9]));
      await writeFile(join(repo, "new file.txt"), "x\ny\n");
      await writeFile(join(repo, "日本語.md"), "# title\n");
      await writeFile(join(repo, "sub", "lib.txt"), "lib changed\n");

      const res = await ws.getChanges({ name: await session("kinds", repo) });
      expect(res).toMatchObject({ repositoryRoot: repo, branch: "main", cwdPrefix: "", mergeInProgress: false });
      expect(res.headCommit).toBe(git(repo, "rev-parse", "HEAD").trim());
      const common = {
        previous: "",
        added: 0,
        removed: 0,
        binary: false,
        submodule: false,
        staged: false,
        unstaged: false,
      };
      expect(res.files.map(summary)).toEqual([
        { ...common, path: "a.txt", change: "MODIFIED", unstaged: true, added: 2, removed: 1 },
        { ...common, path: "added.txt", change: "ADDED", staged: true, added: 1 },
        { ...common, path: "both.txt", change: "MODIFIED", staged: true, unstaged: true, added: 2 },
        // Lines are counted against HEAD with renames found, copies not: a copy's lines are all added.
        { ...common, path: "copy.txt", change: "COPIED", previous: "orig.txt", staged: true, added: 10 },
        { ...common, path: "gone.txt", change: "DELETED", unstaged: true, removed: 1 },
        { ...common, path: "img.bin", change: "MODIFIED", unstaged: true, binary: true },
        { ...common, path: "new file.txt", change: "UNTRACKED", unstaged: true, added: 2 },
        { ...common, path: "orig.txt", change: "MODIFIED", staged: true, added: 1 },
        { ...common, path: "renamed ünï.txt", change: "RENAMED", previous: "rename me.txt", staged: true },
        // A submodule whose work tree changed (its commit did not): no lines of its own.
        { ...common, path: "sub", change: "MODIFIED", unstaged: true, submodule: true },
        { ...common, path: "typechange", change: "TYPE_CHANGED", unstaged: true, added: 1, removed: 1 },
        { ...common, path: "日本語.md", change: "UNTRACKED", unstaged: true, added: 1 },
      ]);

      const diff = await ws.getFileDiff({ name: name("kinds"), path: "a.txt" });
      expect(diff).toMatchObject({ path: "a.txt", linesAdded: 2, linesRemoved: 1, binary: false, truncated: false });
      expect(diff.diff).toContain("\n-two\n+TWO\n+three\n");
      const staged = await ws.getFileDiff({ name: name("kinds"), path: "both.txt", staged: true });
      expect(staged.diff).toContain("\n+4\n");
      expect(staged.diff).not.toContain("+5");
      expect((await ws.getFileDiff({ name: name("kinds"), path: "both.txt" })).diff).toContain("\n+4\n+5\n");
      const untracked = await ws.getFileDiff({ name: name("kinds"), path: "日本語.md" });
      expect(untracked).toMatchObject({ linesAdded: 1, linesRemoved: 0 });
      expect(untracked.diff).toContain("+++ b/日本語.md\n@@ -0,0 +1 @@\n+# title\n");
      expect(await ws.getFileDiff({ name: name("kinds"), path: "img.bin" })).toMatchObject({
        binary: true,
        binarySummary: "binary, 5 bytes",
        diff: "",
      });
      expect((await ws.getFileDiff({ name: name("kinds"), path: "gone.txt" })).diff).toContain("deleted file mode");
      // A staged rename diffs as the rename (git diff -M over both paths), not as its new path all added.
      const renamed = await ws.getFileDiff({ name: name("kinds"), path: "renamed ünï.txt", staged: true });
      expect(renamed.diff).toContain("rename from rename me.txt\nrename to renamed ünï.txt\n");
      expect([renamed.linesAdded, renamed.linesRemoved]).toEqual([0, 0]);
      expect(await failureOf(ws.getFileDiff({ name: name("kinds"), path: ".gitmodules" }))).toEqual({
        code: "NotFound",
        message: '".gitmodules" has no change against HEAD',
      });
      // The CLI shows the same, as text, as JSON and as a diff.
      const changes = await runCli(["changes", "n1/kinds"], hub().cliEnv);
      expect(changes).toMatchObject({ code: 0, stderr: "" });
      expect(changes.stdout).toContain("Staged (5):\n  A  added.txt  +1 -0\n  M  both.txt  +2 -0\n");
      expect(changes.stdout).toContain("  R  rename me.txt -> renamed ünï.txt  +0 -0\n");
      expect(changes.stdout).toContain("Untracked (2):\n  ?  new file.txt  +2 -0\n  ?  日本語.md  +1 -0\n");
      const json = JSON.parse((await runCli(["changes", "n1/kinds", "--json"], hub().cliEnv)).stdout);
      expect(json.files.find((x: { path: string }) => x.path === "img.bin")).toMatchObject({ binary: true });
      const cliDiff = await runCli(["diff", "n1/kinds", "a.txt"], hub().cliEnv);
      expect(cliDiff).toMatchObject({ code: 0, stderr: "" });
      expect(cliDiff.stdout).toContain("\n-two\n+TWO\n+three\n");
      const all = await runCli(["diff", "n1/kinds"], hub().cliEnv);
      expect(all.stdout).toContain("img.bin: binary, 5 bytes\n");
      expect(all.stdout).toContain("+++ b/new file.txt\t\n");
      expect(await runCli(["changes", "n1/nope"], hub().cliEnv)).toMatchObject({ code: 1 });
      // A pathspec pattern is a name, not a pattern: `*.txt` names no file.
      expect((await failureOf(ws.getFileDiff({ name: name("kinds"), path: "*.txt" }))).code).toBe("NotFound");
    },
    KINDS_TEST_MS,
  );

  it("keeps Session.changed_files and branch current from file watches, and leaves them unset outside a repository", async () => {
    const repo = await newRepo(join(dir, "counted"));
    await writeFile(join(repo, "a.txt"), "a\n");
    git(repo, "add", ".");
    git(repo, "commit", "-qm", "c");
    const plain = join(dir, "plain");
    await mkdir(plain);
    const counted = await session("counted", repo);
    const notRepo = await session("plain", plain);
    const read = async (n: string) => (await hub().sessions.getSession({ name: n })).session;
    await waitFor(async () => (await read(counted))?.changedFiles === 0, "a count of 0");
    expect((await read(counted))?.branch).toBe("main");
    await writeFile(join(repo, "a.txt"), "changed\n");
    await writeFile(join(repo, "b.txt"), "new\n");
    await waitFor(async () => (await read(counted))?.changedFiles === 2, "a count of 2 after two writes");
    git(repo, "checkout", "-q", "-b", "feature");
    await waitFor(async () => (await read(counted))?.branch === "feature", "the new branch");
    const plainSession = await read(notRepo);
    expect(plainSession?.changedFiles).toBeUndefined();
    expect(plainSession?.branch).toBe("");
  });

  it("says a folder that is not a repository is none, reads a detached HEAD, and a merge in progress", async () => {
    const plain = join(dir, "not-a-repo");
    await mkdir(plain);
    await writeFile(join(plain, "notes.txt"), "hello\n");
    const plainName = await session("not-a-repo", plain);
    expect(await failureOf(ws.getChanges({ name: plainName }))).toEqual({
      code: "FailedPrecondition",
      message: `the session's folder ${plain} is not in a git repository`,
    });
    // The file browser still works there.
    expect((await ws.listFiles({ name: plainName })).entries.map((e) => e.name)).toEqual(["notes.txt"]);

    const repo = await newRepo(join(dir, "detached"));
    await writeFile(join(repo, "f.txt"), "1\n");
    git(repo, "add", ".");
    git(repo, "commit", "-qm", "one");
    await writeFile(join(repo, "f.txt"), "2\n");
    git(repo, "commit", "-qam", "two");
    git(repo, "checkout", "-q", "--detach", "HEAD~1");
    const detached = await ws.getChanges({ name: await session("detached", repo) });
    expect(detached).toMatchObject({ branch: "", files: [] });
    expect(detached.headCommit).toBe(git(repo, "rev-parse", "HEAD").trim());

    const merge = await newRepo(join(dir, "merge"));
    await writeFile(join(merge, "c.txt"), "base\n");
    git(merge, "add", ".");
    git(merge, "commit", "-qm", "base");
    git(merge, "checkout", "-q", "-b", "other");
    await writeFile(join(merge, "c.txt"), "other\n");
    git(merge, "commit", "-qam", "other");
    git(merge, "checkout", "-q", "main");
    await writeFile(join(merge, "c.txt"), "mine\n");
    git(merge, "commit", "-qam", "mine");
    expect(() => git(merge, "merge", "-q", "other")).toThrow();
    const merging = await ws.getChanges({ name: await session("merge", merge) });
    expect(merging.mergeInProgress).toBe(true);
    expect(merging.files.map(summary)).toMatchObject([
      { path: "c.txt", change: "UNMERGED", staged: true, unstaged: true },
    ]);
  });

  it("refuses every way out of the session's folder, naming the rule, and opens nothing outside it", async () => {
    const root = join(dir, "confined");
    const outside = join(dir, "outside");
    await Promise.all([mkdir(root), mkdir(outside)]);
    git(root, "init", "-q");
    await writeFile(join(root, "ok.txt"), "inside\n");
    fifo = await openCountingFifo(join(outside, "fifo"));
    await symlink(join(outside, "fifo"), join(root, "link-out"));
    await symlink("/etc/passwd", join(root, "passwd"));
    await symlink(outside, join(root, "folder-out"));
    const s = await session("confined", root);
    const cases: Array<[string, string]> = [
      ["../outside/fifo", `path "../outside/fifo": contains ".."; paths stay inside the session's folder`],
      [join(outside, "fifo"), `is absolute; paths are relative to the session's folder`],
      ["/etc/passwd", `path "/etc/passwd": is absolute; paths are relative to the session's folder`],
      ["link-out", `path "link-out": leads outside the session's folder through a symlink`],
      ["passwd", `path "passwd": leads outside the session's folder through a symlink`],
      ["folder-out/fifo", `path "folder-out/fifo": leads outside the session's folder through a symlink`],
      ["ok.txt\0", `path "ok.txt\\\\0": contains a NUL character`],
      ["a/".repeat(2500), "is longer than 4096 characters"],
    ];
    for (const [path, message] of cases) {
      for (const call of [
        () => ws.readFile({ name: s, path }),
        () => ws.getFileDiff({ name: s, path }),
        () => ws.listFiles({ name: s, path }),
      ]) {
        const failure = await failureOf(call());
        expect(failure.code, path.slice(0, 40)).toBe("PermissionDenied");
        expect(failure.message).toContain(message);
      }
    }
    // The symlinks are listed as symlinks; nothing behind them was opened: the FIFO's first reader is us.
    const listed = await ws.listFiles({ name: s });
    expect(listed.entries.map((e) => [e.name, FileKind[e.kind]])).toEqual([
      ["folder-out", "SYMLINK"],
      ["link-out", "SYMLINK"],
      ["ok.txt", "FILE"],
      ["passwd", "SYMLINK"],
    ]);
    expect(await fifo.firstReader()).toBe("1");
    const ok = await ws.readFile({ name: s, path: "ok.txt" });
    expect(Buffer.from(ok.content).toString()).toBe("inside\n");
  });

  it("lists secret-looking files as present but refuses to read or diff them, StarAgent's own folder included", async () => {
    const root = join(dir, "secrets");
    await mkdir(root);
    git(root, "init", "-q");
    const secrets = [".env", ".env.local", "cert.pem", "server.key", "id_rsa", "id_ed25519", ".netrc"];
    for (const s of secrets) await writeFile(join(root, s), "TOKEN=hunter2\n");
    for (const folder of [".ssh", ".aws", ".gnupg"]) {
      await mkdir(join(root, folder));
      await writeFile(join(root, folder, "config"), "TOKEN=hunter2\n");
    }
    await writeFile(join(root, "id_rsa.pub"), "ssh-ed25519 AAAA public\n");
    const s = await session("secrets", root);
    for (const path of [...secrets, ".ssh/config", ".aws/config", ".gnupg/config"]) {
      for (const call of [() => ws.readFile({ name: s, path }), () => ws.getFileDiff({ name: s, path })]) {
        const failure = await failureOf(call());
        expect([path, failure.code]).toEqual([path, "PermissionDenied"]);
        expect(failure.message).toBe(`path ${JSON.stringify(path)}: looks like a secret`);
      }
    }
    const listed = await ws.listFiles({ name: s });
    const secretFlags = Object.fromEntries(listed.entries.map((e) => [e.name, e.secret]));
    expect(secretFlags).toMatchObject({ ".env": true, ".ssh": true, id_rsa: true, "id_rsa.pub": false });
    expect(listed.entries.slice(0, 3).map((e) => FileKind[e.kind])).toEqual(["FOLDER", "FOLDER", "FOLDER"]);
    expect(Buffer.from((await ws.readFile({ name: s, path: "id_rsa.pub" })).content).toString()).toContain("public");
    // The diff of the changes lists the secrets by name only.
    const changes = await ws.getChanges({ name: s });
    expect(changes.files.map((c) => c.path)).toContain(".env");

    // A session whose folder holds the Node's $STARAGENT_HOME: nothing in it is read.
    const home = (node as ServerProcess).home;
    const parent = join(home, "..");
    const above = await session("above-home", parent);
    await writeFile(join(home, "state.json"), "{}\n");
    const inHome = `${basename(home)}/state.json`;
    expect(await failureOf(ws.readFile({ name: above, path: inHome }))).toEqual({
      code: "PermissionDenied",
      message: `path ${JSON.stringify(inHome)}: looks like a secret (StarAgent's own folder)`,
    });
  });

  it("reads files typed by content within their limits, pages folders, and gives system sessions no workspace", async () => {
    const root = join(dir, "files");
    await mkdir(join(root, "z-folder"), { recursive: true });
    await writeFile(join(root, "readme.md"), "# Hello\n");
    await writeFile(join(root, "fake.png"), "not an image at all\n");
    await writeFile(join(root, "real.txt"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]));
    await writeFile(join(root, "blob"), Buffer.from([0, 1, 2, 3, 4]));
    await writeFile(join(root, "big.txt"), "x".repeat(1024 * 1024 + 10));
    const s = await session("files", root);
    const read = (path: string, maxBytes = 0n) => ws.readFile({ name: s, path, maxBytes });
    expect(await read("readme.md")).toMatchObject({
      mimeType: "text/markdown; charset=utf-8",
      truncated: false,
      size: 8n,
    });
    expect((await read("fake.png")).mimeType).toBe("text/plain; charset=utf-8");
    expect((await read("real.txt")).mimeType).toBe("image/png");
    expect(await read("blob")).toMatchObject({ mimeType: "application/octet-stream", content: new Uint8Array() });
    const big = await read("big.txt");
    expect([big.content.length, big.truncated, big.size]).toEqual([1024 * 1024, true, BigInt(1024 * 1024 + 10)]);
    expect((await read("big.txt", 10n)).content.length).toBe(10);
    expect((await failureOf(read("z-folder"))).code).toBe("FailedPrecondition");
    expect(await failureOf(read("missing.txt"))).toEqual({
      code: "NotFound",
      message: `"missing.txt" does not exist in the session's folder`,
    });
    const first = await ws.listFiles({ name: s, pageSize: 2 });
    expect(first.entries.map((e) => e.name)).toEqual(["z-folder", "big.txt"]);
    const second = await ws.listFiles({ name: s, pageSize: 2, pageToken: first.nextPageToken });
    expect(second.entries.map((e) => e.name)).toEqual(["blob", "fake.png"]);
    expect(await failureOf(ws.listFiles({ name: s, path: "readme.md" }))).toEqual({
      code: "FailedPrecondition",
      message: `"readme.md" is not a folder`,
    });
    expect(await failureOf(ws.getChanges({ name: "nodes/n1/sessions/nope" }))).toMatchObject({ code: "NotFound" });
    await (tmux as TestTmux).run("new-session", "-d", "-s", "staragent-node", "-c", root, "sleep 3600");
    for (const call of [
      () => ws.listFiles({ name: name("staragent-node") }),
      () => ws.getChanges({ name: name("staragent-node") }),
    ]) {
      expect(await failureOf(call())).toEqual({
        code: "FailedPrecondition",
        message: "nodes/n1/sessions/staragent-node is a system session: it has no workspace",
      });
    }
  });
});
