import { mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeService } from "../../gen/staragent/v1/node_service_pb.js";
import { SessionType } from "../../gen/staragent/v1/session_pb.js";
import { SessionService } from "../../gen/staragent/v1/session_service_pb.js";
import { REPO_ROOT, runCli, runProcess, startServerProcess } from "../support/servers.js";
import { createTestTmux, type TestTmux } from "../support/tmux.js";
import { waitFor } from "../support/wait.js";
import { failureOf, grpcClient, testToken } from "./hub-fixture.js";

const STAND_INS = join(REPO_ROOT, "test/stand-ins");
/**
 * The tests that start services start two processes each (the session's supervisor and the service)
 * and wait for each to come up: on a loaded 2-core machine that takes longer than the default 30 s.
 */
const SERVICES_TEST_TIMEOUT_MS = 120_000;

/**
 * True while a process with this id runs: exists and has not exited (a zombie has: where the
 * container's init reaps nothing, the panes' processes stay zombies once tmux's server is gone).
 */
async function running(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
  return stat !== "" && stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
}

/** What `/proc` shows every user of the machine about a process: its argv, and (to its owner) its environment. */
async function visible(pid: number): Promise<string> {
  const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8");
  const environ = await readFile(`/proc/${pid}/environ`, "utf8");
  return `${cmdline}\n${environ}`;
}

describe("staragent system: StarAgent's own services in their tmux sessions", () => {
  let tmux: TestTmux;
  let home: string;
  let env: NodeJS.ProcessEnv;
  const nodeToken = testToken();
  const userToken = testToken();

  beforeAll(async () => {
    tmux = createTestTmux();
    home = await realpath(await mkdtemp(join(tmpdir(), "sa-system-")));
    env = {
      STARAGENT_HOME: home,
      STARAGENT_TMUX_SOCKET: tmux.socketName,
      PATH: `${STAND_INS}:${process.env.PATH}`,
      STARAGENT_AUTH_TOKEN: "",
      STARAGENT_NODE_TOKEN: "",
    };
  });

  afterAll(async () => {
    // Killing the private tmux server ends whatever a failed test left in its sessions (SIGHUP).
    await tmux?.close();
    await rm(home, { recursive: true, force: true });
  });

  it("runs a Node and a Hub, idempotently, as type system, with their tokens from the environment on no command line", {
    timeout: SERVICES_TEST_TIMEOUT_MS,
  }, async () => {
    const system = (args: string[], extra: NodeJS.ProcessEnv = {}) => runCli(["system", ...args], { ...env, ...extra });
    const node = await system(["start", "node", "--name", "sysnode", "--port", "0"], {
      STARAGENT_NODE_TOKEN: nodeToken,
    });
    expect(node.stderr).toBe("");
    const started = /^started staragent-node \(pid (\d+)\): listening on (http:\/\/127\.0\.0\.1:\d+)\n$/.exec(
      node.stdout,
    );
    expect(started).not.toBeNull();
    const [, nodePid, nodeUrl = ""] = started as RegExpExecArray;
    expect(await system(["start", "node", "--name", "other"])).toEqual({
      code: 0,
      stdout: `staragent-node is already running (pid ${nodePid}): listening on ${nodeUrl}; nothing changed\n`,
      stderr: "",
    });
    const hub = await system(["start", "hub", "--port", "0", "--node", `sysnode=${nodeUrl}`], {
      STARAGENT_AUTH_TOKEN: userToken,
      STARAGENT_NODE_TOKEN: nodeToken,
    });
    const hubStarted = /^started staragent-hub \(pid (\d+)\): listening on (http:\/\/127\.0\.0\.1:\d+)\n$/.exec(
      hub.stdout,
    );
    expect(hubStarted).not.toBeNull();
    const [, hubPid, hubUrl = ""] = hubStarted as RegExpExecArray;

    const status = await system(["status"]);
    expect(status.code).toBe(0);
    expect(status.stdout.split("\n")).toEqual([
      expect.stringMatching(new RegExp(`^staragent-hub: running \\(pid ${hubPid} since \\S+, ${hubUrl}\\)$`)),
      expect.stringMatching(new RegExp(`^staragent-node: running \\(pid ${nodePid} since \\S+, ${nodeUrl}\\)$`)),
      "staragent-tailscaled: not running",
      "",
    ]);
    expect((await system(["status", "node"])).code).toBe(0);
    expect(await system(["status", "tailscaled"])).toMatchObject({
      code: 3,
      stdout: "staragent-tailscaled: not running\n",
    });

    // The tokens reached both services (they answer with them), through no argv, no tmux environment.
    const hubSessions = grpcClient(SessionService, hubUrl, userToken);
    const listed = await waitFor(async () => {
      const res = await hubSessions.listSessions({ parent: "nodes/-" });
      return res.unreachable.length === 0 && res.sessions.length === 4 && res.sessions;
    }, "the Hub to list both machines' sessions");
    expect(listed.map((s) => [s.name, SessionType[s.type]])).toEqual([
      ["nodes/local/sessions/staragent-hub", "SYSTEM"],
      ["nodes/local/sessions/staragent-node", "SYSTEM"],
      ["nodes/sysnode/sessions/staragent-hub", "SYSTEM"],
      ["nodes/sysnode/sessions/staragent-node", "SYSTEM"],
    ]);
    expect((await grpcClient(NodeService, nodeUrl, nodeToken).getNode({ name: "nodes/sysnode" })).node?.name).toBe(
      "nodes/sysnode",
    );
    for (const pid of [hubPid, nodePid]) {
      const seen = await visible(Number(pid));
      expect(seen).not.toContain(userToken);
      expect(seen).not.toContain(nodeToken);
    }
    // The Hub's pane (the dashboard shows it) says where the token is, never the token.
    const hubPane = await waitFor(async () => {
      const text = await tmux.run("capture-pane", "-p", "-J", "-S", "-", "-t", "=staragent-hub:");
      return text.includes("Log in:") && text;
    }, "the Hub's pane to show how to log in");
    expect(hubPane).not.toContain(userToken);
    expect(hubPane).toContain(`Log in: ${hubUrl}/login with the token from STARAGENT_AUTH_TOKEN`);
    const tmuxEnvironment = await tmux.run("show-environment", "-g");
    expect(tmuxEnvironment).not.toContain(nodeToken);
    expect(tmuxEnvironment).not.toContain("STARAGENT_AUTH_TOKEN");
    expect(await readdir(join(home, "system"))).toEqual([]);
    expect((await stat(join(home, "system"))).mode & 0o777).toBe(0o700);

    // The API never stops them, nor makes one.
    expect(
      await failureOf(hubSessions.stopSession({ name: "nodes/sysnode/sessions/staragent-node", force: true })),
    ).toMatchObject({ code: "FailedPrecondition" });
    expect(
      await failureOf(
        hubSessions.createSession({ parent: "nodes/local", sessionId: "staragent-tailscaled", cwd: home, command: [] }),
      ),
    ).toMatchObject({ code: "InvalidArgument" });

    expect(await system(["stop", "hub"])).toEqual({
      code: 0,
      stdout: `stopped staragent-hub (pid ${hubPid})\n`,
      stderr: "",
    });
    expect(await system(["stop", "node"])).toEqual({
      code: 0,
      stdout: `stopped staragent-node (pid ${nodePid})\n`,
      stderr: "",
    });
    expect(await system(["stop", "node"])).toEqual({
      code: 0,
      stdout: "staragent-node is not running; nothing to stop\n",
      stderr: "",
    });
    expect([await running(Number(hubPid)), await running(Number(nodePid))]).toEqual([false, false]);
    expect(await system(["status", "node"])).toMatchObject({ code: 3, stdout: "staragent-node: not running\n" });
  });

  it("shows why a service exited at once, and leaves no session behind", async () => {
    const result = await runCli(["system", "start", "node", "--no-such-flag"], env);
    expect(result.code).toBe(1);
    // The status is there when tmux has reaped the process: tmux 3.3a sometimes leaves a pane's
    // process a zombie until its next SIGCHLD, and then the dead pane has no status to give.
    expect(result.stderr).toMatch(
      /^staragent system start node: staragent-node exited at once( \(status \d+\))?; its last output:\n/,
    );
    expect(result.stderr).toContain("Unknown option '--no-such-flag'");
    expect((await runCli(["system", "status", "node"], env)).stdout).toBe("staragent-node: not running\n");
  });

  it("runs tailscaled (a stand-in here) with userspace networking, its state and socket under STARAGENT_HOME", {
    timeout: SERVICES_TEST_TIMEOUT_MS,
  }, async () => {
    const started = await runCli(["system", "start", "tailscaled", "--userspace", "--verbose=1"], env);
    const stateDir = join(home, "tailscale");
    const socket = join(stateDir, "tailscaled.sock");
    expect(started).toMatchObject({ code: 0, stderr: "" });
    expect(started.stdout).toMatch(/^started staragent-tailscaled \(pid \d+\)\n/);
    expect(started.stdout).toContain(`  log this machine in to your tailnet: tailscale --socket=${socket} up\n`);
    const argv: string[] = JSON.parse(await readFile(join(stateDir, "standin-argv.json"), "utf8"));
    expect(argv).toEqual([
      "--tun=userspace-networking",
      `--statedir=${stateDir}`,
      `--state=${join(stateDir, "tailscaled.state")}`,
      `--socket=${socket}`,
      "--socks5-server=localhost:1055",
      "--outbound-http-proxy-listen=localhost:1055",
      "--verbose=1",
    ]);
    expect((await stat(stateDir)).mode & 0o777).toBe(0o700);
    expect((await runCli(["system", "status", "tailscaled"], env)).stdout).toMatch(
      /^staragent-tailscaled: running \(pid \d+ since \S+\)\n$/,
    );
    expect((await runCli(["system", "stop", "tailscaled"], env)).stdout).toMatch(/^stopped staragent-tailscaled/);
    expect((await runCli(["system", "status", "tailscaled"], env)).code).toBe(3);
  });

  it("says how to install tailscaled when it is missing, and starts nothing", async () => {
    // A PATH with tmux and nothing else, so no tailscaled the machine may have is found.
    const bin = join(home, "bin-without-tailscaled");
    await mkdir(bin);
    const tmuxPath = (await runProcess("sh", ["-c", 'command -v "$0"', "tmux"])).stdout.trim();
    await symlink(tmuxPath, join(bin, "tmux"));
    const result = await runCli(["system", "start", "tailscaled"], { ...env, PATH: bin });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^staragent system start tailscaled: tailscaled is not installed \(it is not on the PATH\)/,
    );
    expect(result.stderr).toContain("https://tailscale.com/download/linux");
    expect((await runCli(["system", "status", "tailscaled"], { ...env, PATH: bin })).code).toBe(3);
  });
});

describe("tmux's environment", () => {
  it("never gets a server's token, even when the server starts tmux (every pane would inherit it)", async () => {
    const tmux = createTestTmux();
    const token = testToken();
    const cwd = await realpath(await mkdtemp(join(tmpdir(), "sa-env-")));
    const node = await startServerProcess({ kind: "node", tmuxSocket: tmux.socketName, token, args: ["--name", "e1"] });
    try {
      const sessions = grpcClient(SessionService, node.url, token);
      await sessions.createSession({ parent: "nodes/e1", sessionId: "first", cwd, command: ["sleep", "600"] });
      expect(await tmux.run("show-environment", "-g")).not.toContain(token);
      const pid = Number((await tmux.run("display-message", "-p", "-t", "=first:", "#{pane_pid}")).trim());
      expect(await readFile(`/proc/${pid}/environ`, "utf8")).not.toContain(token);
    } finally {
      await node.stop();
      await tmux.close();
      await rm(cwd, { recursive: true, force: true });
    }
  });
});
