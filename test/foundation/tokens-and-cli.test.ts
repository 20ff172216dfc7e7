import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionService } from "../../gen/staragent/v1/session_service_pb.js";
import { REPO_ROOT, runCli, runProcess, type ServerProcess, startServerProcess } from "../support/servers.js";
import { createTestTmux, type TestTmux } from "../support/tmux.js";
import { failureOf, grpcClient } from "./hub-fixture.js";

function npx(args: string[]) {
  return runProcess("npx", args, { cwd: REPO_ROOT, env: { npm_config_update_notifier: "false" } });
}

describe("tokens of real Hub and Node processes", () => {
  let tmux: TestTmux;
  let dir: string;
  const started: ServerProcess[] = [];
  beforeAll(async () => {
    tmux = createTestTmux();
    dir = await mkdtemp(join(tmpdir(), "sa-tokens-it-"));
  });
  afterAll(async () => {
    for (const server of started) await server.stop();
    await tmux?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("a Hub without STARAGENT_AUTH_TOKEN generates a 0600 token file, prints a login link for it, and accepts it", async () => {
    const home = join(dir, "generated");
    const hub = await startServerProcess({
      kind: "hub",
      tmuxSocket: tmux.socketName,
      token: "",
      home,
      env: { STARAGENT_AUTH_TOKEN: "" },
    });
    started.push(hub);
    const token = (await readFile(join(home, "auth_token"), "utf8")).trim();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await stat(join(home, "auth_token"))).mode & 0o777).toBe(0o600);
    expect(hub.stdout()).toContain(`Log in: ${hub.url}/login#token=${token}\n`);
    const res = await grpcClient(SessionService, hub.url, token).listSessions({});
    expect(res.unreachable).toEqual([]);
    const ls = await runCli(["ls"], { STARAGENT_URL: hub.url, STARAGENT_HOME: home, STARAGENT_AUTH_TOKEN: "" });
    expect(ls).toMatchObject({ code: 0, stdout: "no sessions\n" });
    expect(hub.stderr()).not.toContain(token);
  });

  it("STARAGENT_AUTH_TOKEN overrides the token file", async () => {
    const home = join(dir, "overridden");
    const first = await startServerProcess({
      kind: "hub",
      tmuxSocket: tmux.socketName,
      token: "",
      home,
      env: { STARAGENT_AUTH_TOKEN: "" },
    });
    await first.stop();
    const fileToken = (await readFile(join(home, "auth_token"), "utf8")).trim();
    const hub = await startServerProcess({
      kind: "hub",
      tmuxSocket: tmux.socketName,
      token: "env-token-0123456789abcdef",
      home,
    });
    started.push(hub);
    expect((await grpcClient(SessionService, hub.url, hub.token).listSessions({})).unreachable).toEqual([]);
    expect((await failureOf(grpcClient(SessionService, hub.url, fileToken).listSessions({}))).code).toBe(
      "Unauthenticated",
    );
    expect((await readFile(join(home, "auth_token"), "utf8")).trim()).toBe(fileToken);
  });

  it("a Node without STARAGENT_NODE_TOKEN generates a 0600 node_token and accepts only it", async () => {
    const home = join(dir, "node");
    const node = await startServerProcess({
      kind: "node",
      tmuxSocket: tmux.socketName,
      token: "",
      home,
      args: ["--name", "n9"],
      env: { STARAGENT_NODE_TOKEN: "" },
    });
    started.push(node);
    const token = (await readFile(join(home, "node_token"), "utf8")).trim();
    expect((await stat(join(home, "node_token"))).mode & 0o777).toBe(0o600);
    expect(
      (await grpcClient(SessionService, node.url, token).listSessions({ parent: "nodes/n9" })).unreachable,
    ).toEqual([]);
    expect((await failureOf(grpcClient(SessionService, node.url, "another-token").listSessions({}))).code).toBe(
      "Unauthenticated",
    );
  });
});

describe("the staragent command from the repository root", () => {
  it("`npx staragent --help` lists the commands", async () => {
    const help = await npx(["staragent", "--help"]);
    expect(help.stderr).toBe("");
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: staragent COMMAND \[ARGS\]/);
    for (const command of ["hub", "node", "ls", "new", "stop"])
      expect(help.stdout).toMatch(new RegExp(`^  ${command} `, "m"));
  });

  it("reports usage errors and unknown commands with exit code 2", async () => {
    expect(await runCli(["frobnicate"], {})).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/unknown command 'frobnicate'/),
    });
    expect(await runCli(["stop"], { STARAGENT_AUTH_TOKEN: "x" })).toMatchObject({
      code: 2,
      stderr: "staragent stop: usage: staragent stop NAME [--force] [--remove-worktree]\n",
    });
  });

  it("says UNAVAILABLE and where it looked when no Hub answers", async () => {
    const res = await runCli(["ls"], { STARAGENT_URL: "http://127.0.0.1:1", STARAGENT_AUTH_TOKEN: "x" });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^staragent ls: Unavailable: .*\(is the Hub running at http:\/\/127\.0\.0\.1:1\?\)\n$/);
  });
});
