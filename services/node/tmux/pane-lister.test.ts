import { existsSync } from "node:fs";
import { chmod, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { processAlive } from "../../../test/support/process-alive.js";
import { eachTempDir } from "../../../test/support/temp-dir.js";
import { createTestTmux, type TestTmux } from "../../../test/support/tmux.js";
import { TmuxClient, TmuxError } from "./client.js";
import { PaneLister } from "./pane-lister.js";
import { listPanes, type PaneInfo } from "./panes.js";

/** What identifies a pane and its program (the fields that do not move with time or output). */
function identity(p: PaneInfo) {
  const { sessionName, sessionId, sessionCreated, windowId, paneId, panePid, paneCurrentCommand, paneCurrentPath } = p;
  return { sessionName, sessionId, sessionCreated, windowId, paneId, panePid, paneCurrentCommand, paneCurrentPath };
}

describe("PaneLister on a private tmux server", () => {
  let tmux: TestTmux;
  let dir = "";
  eachTempDir("sa-pane-lister-", (d) => {
    dir = d;
  });
  beforeEach(() => {
    tmux = createTestTmux();
  });
  afterEach(async () => {
    await tmux.close();
  });

  /** A tmux stand-in: runs `body` (sh) before handing its arguments to the real tmux. */
  async function wrappedTmux(body: string): Promise<TmuxClient> {
    const path = join(dir, "tmux");
    await writeFile(path, `#!/bin/sh\n${body}\nexec tmux "$@"\n`);
    await chmod(path, 0o755);
    return new TmuxClient({ socketName: tmux.socketName, tmuxPath: path });
  }

  it("lists what listPanes lists, from one shell kept for the next listing; [] with no server", async () => {
    const lister = new PaneLister(tmux.client);
    try {
      expect(await lister.list()).toEqual([]);
      await tmux.run("new-session", "-d", "-s", "one", "-c", dir, "sleep 600");
      await tmux.run("new-session", "-d", "-s", "two ; odd é", "-c", dir, "sleep 600");
      // Once both panes run their command, what a listing shows of them holds still.
      await expect
        .poll(async () => (await listPanes(tmux.client)).map((p) => p.paneCurrentCommand), { timeout: 10_000 })
        .toEqual(["sleep", "sleep"]);
      const first = await lister.list();
      const shell = lister.shellPid;
      expect(shell).toBeGreaterThan(0);
      expect(first.map((p) => p.sessionName).sort()).toEqual(["one", "two ; odd é"]);
      expect(first.map(identity)).toEqual((await listPanes(tmux.client)).map(identity));
      // Listings asked for at once each get their own answer, one after the other, from the same shell.
      const [a, b] = await Promise.all([lister.list(), lister.list()]);
      expect(a.map(identity)).toEqual(first.map(identity));
      expect(b.map(identity)).toEqual(first.map(identity));
      expect(lister.shellPid).toBe(shell);
    } finally {
      lister.close();
    }
  });

  it("starts another shell when its shell was killed, and stops it on close", async () => {
    await tmux.run("new-session", "-d", "-s", "one", "sleep 600");
    const lister = new PaneLister(tmux.client);
    await lister.list();
    const shell = lister.shellPid as number;
    process.kill(shell, "SIGKILL");
    await expect.poll(() => lister.shellPid, { timeout: 5_000 }).toBeUndefined();
    expect((await lister.list()).map((p) => p.sessionName)).toEqual(["one"]);
    const next = lister.shellPid as number;
    expect(next).not.toBe(shell);
    lister.close();
    await expect.poll(() => processAlive(next), { timeout: 5_000 }).toBe(false);
    // Closed, it still lists (spawning tmux itself).
    expect((await lister.list()).map((p) => p.sessionName)).toEqual(["one"]);
    expect(lister.shellPid).toBeUndefined();
  });

  it("stops a listing tmux never answers after its timeout, and the next listing works", async () => {
    await tmux.run("new-session", "-d", "-s", "one", "sleep 600");
    // The first listing hangs; the ones after it run tmux.
    const client = await wrappedTmux(`[ -e "${dir}/hung" ] || { touch "${dir}/hung"; sleep 600; }`);
    const lister = new PaneLister(client, 500);
    try {
      const started = performance.now();
      const err = await lister.list().catch((e: unknown) => e);
      const elapsed = performance.now() - started;
      expect(err).toBeInstanceOf(TmuxError);
      expect((err as Error).message).toBe("tmux list-panes took longer than 500 ms and was stopped");
      expect(elapsed).toBeGreaterThanOrEqual(490);
      expect((await lister.list()).map((p) => p.sessionName)).toEqual(["one"]);
    } finally {
      lister.close();
    }
  });

  it("reports tmux's own words when it fails for another reason than no server", async () => {
    const client = await wrappedTmux(`echo "unknown option -- z" >&2; exit 1`);
    const lister = new PaneLister(client);
    try {
      const err = await lister.list().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TmuxError);
      expect((err as TmuxError).message).toBe("tmux list-panes failed: unknown option -- z");
      expect((err as TmuxError).exitCode).toBe(1);
    } finally {
      lister.close();
    }
  });

  it("says tmux cannot be run when its binary is missing, as a spawn would", async () => {
    const missing = join(dir, "no-such-tmux");
    const lister = new PaneLister(new TmuxClient({ socketName: tmux.socketName, tmuxPath: missing }));
    try {
      const err = await lister.list().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TmuxError);
      expect((err as Error).message).toMatch(new RegExp(`^cannot run ${missing}: .*not found`));
    } finally {
      lister.close();
    }
  });

  it("spawns tmux itself where no sh can be started", async () => {
    await tmux.run("new-session", "-d", "-s", "one", "sleep 600");
    const tmuxPath = (process.env.PATH ?? "")
      .split(":")
      .map((d) => join(d, "tmux"))
      .find((p) => existsSync(p));
    // A PATH with no `sh` on it; tmux is named by its full path.
    const env = { PATH: dir, HOME: dir, ...(process.env.TMUX_TMPDIR ? { TMUX_TMPDIR: process.env.TMUX_TMPDIR } : {}) };
    const client = new TmuxClient({ socketName: tmux.socketName, tmuxPath, env });
    const lister = new PaneLister(client);
    try {
      expect((await lister.list()).map((p) => p.sessionName)).toEqual(["one"]);
      expect((await lister.list()).map((p) => p.sessionName)).toEqual(["one"]);
      expect(lister.shellPid).toBeUndefined();
    } finally {
      lister.close();
    }
  });
});
