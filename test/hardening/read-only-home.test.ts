import { chmod, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runProcess, STARAGENT_BIN, withoutFilePermissionOverride } from "../support/servers.js";
import { createTestTmux, type TestTmux } from "../support/tmux.js";

describe("a server started on a read-only home", () => {
  let home: string;
  let tmux: TestTmux;
  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), "sa-ro-home-"));
    await chmod(home, 0o500);
    tmux = createTestTmux();
  });
  afterAll(async () => {
    await chmod(home, 0o700);
    await rm(home, { recursive: true, force: true });
    await tmux?.close();
  });

  it.each([
    ["hub", "STARAGENT_AUTH_TOKEN"],
    ["node", "STARAGENT_NODE_TOKEN"],
  ])("%s: says which folder must be writable and which variable gives the token instead", async (kind, variable) => {
    const [wrapper, ...wrapperArgs] = [...withoutFilePermissionOverride(), process.execPath];
    const run = await runProcess(wrapper as string, [...wrapperArgs, STARAGENT_BIN, kind, "--port", "0"], {
      env: { STARAGENT_HOME: home, STARAGENT_TMUX_SOCKET: tmux.socketName, [variable]: "" },
    });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(`make ${home} writable (or set STARAGENT_HOME to a writable folder)`);
    expect(run.stderr).toContain(`or give the token in ${variable} instead`);
    expect(run.stderr).not.toMatch(/\.tmp-\d+/);
    expect(await readdir(home)).toEqual([]);
  });
});
