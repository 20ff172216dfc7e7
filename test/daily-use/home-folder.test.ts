import { mkdir, mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failureOf, type HubFixture, startHubFixture, testToken } from "../foundation/hub-fixture.js";
import { type ServerProcess, startServerProcess } from "../support/servers.js";
import { createTestTmux, type TestTmux } from "../support/tmux.js";

/**
 * `~` and `~/x` in a new session's folder are expanded on the machine that owns the session: a
 * person creating a session on a Node from the dashboard types `~/project` as in a shell there.
 */
describe("a new session's folder given as ~ or ~/x", () => {
  let nodeTmux: TestTmux;
  let node: ServerProcess | undefined;
  let f: HubFixture | undefined;
  let nodeHome: string;
  const hub = () => f as HubFixture;

  beforeAll(async () => {
    nodeHome = await realpath(await mkdtemp(join(tmpdir(), "sa-node-user-home-")));
    await mkdir(join(nodeHome, "project"));
    nodeTmux = createTestTmux();
    const token = testToken();
    node = await startServerProcess({
      kind: "node",
      tmuxSocket: nodeTmux.socketName,
      token,
      args: ["--name", "w1"],
      env: { HOME: nodeHome },
    });
    f = await startHubFixture({ args: ["--node", `w1=${node.url}`], env: { STARAGENT_NODE_TOKEN: token } });
  });
  afterAll(async () => {
    await f?.close();
    await node?.stop();
    await nodeTmux?.close();
    await rm(nodeHome, { recursive: true, force: true });
  });

  it("expands ~ and ~/project to the owning machine's home, and says what a folder must be", async () => {
    const sleep = ["sleep", "600"];
    const home = await hub().sessions.createSession({
      parent: "nodes/w1",
      sessionId: "at-home",
      cwd: "~",
      command: sleep,
    });
    expect(home.session?.cwd).toBe(nodeHome);
    const project = await hub().sessions.createSession({
      parent: "nodes/w1",
      sessionId: "in-project",
      cwd: "~/project",
      command: sleep,
    });
    expect(project.session?.cwd).toBe(join(nodeHome, "project"));
    const other = await failureOf(
      hub().sessions.createSession({ parent: "nodes/w1", sessionId: "elsewhere", cwd: "~nobody/x", command: sleep }),
    );
    expect(other).toEqual({
      code: "InvalidArgument",
      message: 'cwd: "~nobody/x" is not an absolute path (give /path/to/folder, ~ or ~/folder)',
    });
  });
});
