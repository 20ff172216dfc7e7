import { chmod, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestTmux, type TestTmux } from "../../../test/support/tmux.js";
import { waitFor } from "../../../test/support/wait.js";
import { listPanes, ORIGIN_OPTION } from "./panes.js";
import { isKeepPaneWrapper, KEEP_PANE_ARGV_PREFIX, killSession, newSession } from "./sessions.js";

/** argv of a process, from /proc. */
async function argvOf(pid: number): Promise<string[]> {
  const raw = await readFile(`/proc/${pid}/cmdline`, "utf8");
  return raw.split("\0").slice(0, -1);
}

async function paneOf(tmux: TestTmux, session: string) {
  return waitFor(
    async () => (await listPanes(tmux.client)).find((p) => p.sessionName === session),
    `pane of ${session}`,
  );
}

describe("newSession and killSession on a private tmux server", () => {
  let tmux: TestTmux;
  let dir: string;
  beforeEach(async () => {
    tmux = createTestTmux();
    dir = await mkdtemp(join(tmpdir(), "sa-sessions-"));
  });
  afterEach(async () => {
    await tmux.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("runs the argv as given: ';' arguments are data, never a second tmux command", async () => {
    await tmux.run("new-session", "-d", "-s", "bystander", "sleep 600");
    const argv = ["sh", "-c", "sleep 600 & wait", ";", "kill-server;", "end\\;", "a;b", ";kill-server"];
    await newSession(tmux.client, { name: "semi", cwd: dir, command: argv, origin: "created" });
    const pane = await paneOf(tmux, "semi");
    await waitFor(async () => (await argvOf(pane.panePid))[0] === "sh", "the pane to exec the command");
    expect(await argvOf(pane.panePid)).toEqual(argv);
    expect(pane.sessionOrigin).toBe("created");
    // tmux reads the path from the running program, so ask again once the command runs.
    const settled = await waitFor(
      async () => (await listPanes(tmux.client)).find((p) => p.sessionName === "semi" && p.paneCurrentPath !== ""),
      "the pane's current path",
    );
    expect(settled.paneCurrentPath).toBe(dir);
    const names = (await listPanes(tmux.client)).map((p) => p.sessionName).sort();
    expect(names).toEqual(["bystander", "semi"]);
  });

  it("never hands a single-argument command to a shell", async () => {
    const script = join(dir, "x $(touch pwned); touch pwned2");
    await writeFile(script, "#!/bin/sh\nexec sleep 600\n");
    await chmod(script, 0o755);
    await newSession(tmux.client, { name: "meta", cwd: dir, command: [script], origin: "created" });
    const pane = await paneOf(tmux, "meta");
    await waitFor(async () => (await argvOf(pane.panePid))[0] === "sleep", "the script to run");
    expect(await argvOf(pane.panePid)).toEqual(["sleep", "600"]);
    await expect(stat(join(dir, "pwned"))).rejects.toThrow(/ENOENT/);
    await expect(stat(join(dir, "pwned2"))).rejects.toThrow(/ENOENT/);
  });

  it("marks the origin option and refuses a duplicate name", async () => {
    await newSession(tmux.client, { name: "dup", cwd: dir, command: ["sleep", "600"], origin: "created" });
    expect((await tmux.run("show-options", "-t", "=dup:", "-v", ORIGIN_OPTION)).trim()).toBe("created");
    await expect(
      newSession(tmux.client, { name: "dup", cwd: dir, command: ["sleep", "600"], origin: "created" }),
    ).rejects.toMatchObject({ stderr: expect.stringMatching(/duplicate session/) });
  });

  it("kills by exact name only", async () => {
    await newSession(tmux.client, { name: "foobar", cwd: dir, command: ["sleep", "600"], origin: "created" });
    await expect(killSession(tmux.client, "foo")).rejects.toMatchObject({ isNotFound: true });
    await killSession(tmux.client, "foobar");
    expect(await listPanes(tmux.client)).toEqual([]);
  });
});

describe("isKeepPaneWrapper", () => {
  it("knows the wrapper of this version and of an earlier one, and nothing else", () => {
    expect(isKeepPaneWrapper({ argv: [...KEEP_PANE_ARGV_PREFIX, "codex"] })).toBe(true);
    // An earlier version's script (panes outlive an upgrade).
    const earlier = 'set -m\ntrap : INT QUIT\n"$@"\nstatus=$?';
    expect(isKeepPaneWrapper({ argv: ["/bin/sh", "-c", earlier, "staragent-run", "codex"] })).toBe(true);
    expect(isKeepPaneWrapper({ argv: ["/bin/sh", "-c", 'exec "$@"', "staragent-exec", "codex"] })).toBe(false);
    expect(isKeepPaneWrapper({ argv: ["sh", "-c", "echo staragent-run", "staragent-run"] })).toBe(false);
    expect(isKeepPaneWrapper({ argv: ["codex"] })).toBe(false);
  });
});
