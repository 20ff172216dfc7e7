import { mkdtemp, readFile, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionService } from "../../gen/staragent/v1/session_service_pb.js";
import { nextBackoff, type RestartTimings } from "../../services/node/system/supervisor.js";
import { SystemSessions, type SystemState } from "../../services/node/system/system-sessions.js";
import { TmuxClient } from "../../services/node/tmux/client.js";
import type { SupervisionRecord } from "../../services/node/tmux/supervision-record.js";
import { grpcClient, testToken } from "../foundation/hub-fixture.js";
import { closedPort } from "../support/ports.js";
import { runCli, STARAGENT_BIN } from "../support/servers.js";
import { createTestTmux, type TestTmux } from "../support/tmux.js";
import { waitFor } from "../support/wait.js";

/** Short restart waits, so a test sees several restarts and a reset in a few seconds. */
const TIMINGS: RestartTimings = { initialBackoffMs: 300, maxBackoffMs: 1_200, stableMs: 4_000 };

/** True while a process with this id runs (exists and is no zombie). */
async function running(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
  return stat !== "" && stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
}

describe("nextBackoff", () => {
  it("starts at the initial wait, doubles to the longest, and goes back after a stable run", () => {
    expect(nextBackoff(TIMINGS, 0, 10)).toBe(300);
    expect(nextBackoff(TIMINGS, 300, 10)).toBe(600);
    expect(nextBackoff(TIMINGS, 600, 10)).toBe(1_200);
    expect(nextBackoff(TIMINGS, 1_200, 10)).toBe(1_200);
    expect(nextBackoff(TIMINGS, 1_200, 3_999)).toBe(1_200);
    expect(nextBackoff(TIMINGS, 1_200, 4_000)).toBe(300);
  });
});

describe("staragent system: a service that exits is started again", () => {
  let tmux: TestTmux;
  let home: string;
  let sessions: SystemSessions;
  let env: NodeJS.ProcessEnv;
  const token = testToken();

  beforeAll(async () => {
    tmux = createTestTmux();
    home = await realpath(await mkdtemp(join(tmpdir(), "sa-supervise-")));
    env = { ...process.env, STARAGENT_HOME: home, STARAGENT_TMUX_SOCKET: tmux.socketName, STARAGENT_NODE_TOKEN: token };
    delete env.STARAGENT_AUTH_TOKEN;
    sessions = new SystemSessions({
      tmux: new TmuxClient({ socketName: tmux.socketName }),
      home,
      launcher: [process.execPath, STARAGENT_BIN],
      env,
      probePaths: { path: "", tunDevice: "/nonexistent", systemdDir: "/nonexistent" },
      restartTimings: TIMINGS,
    });
  });

  afterAll(async () => {
    await sessions?.stop("node").catch(() => undefined);
    await tmux?.close();
    await rm(home, { recursive: true, force: true });
  });

  /** The supervisor's record once `ready` holds for it. */
  const recordWhen = async (what: string, ready: (r: SupervisionRecord) => boolean): Promise<SupervisionRecord> =>
    waitFor(
      async () => {
        const { supervision } = await sessions.status("node");
        return supervision && ready(supervision) ? supervision : undefined;
      },
      what,
      30_000,
      25,
    );

  it("restarts a Node that was killed, waiting longer each time and the initial wait again after a stable run; status and the Session show why it went", async () => {
    const port = await closedPort();
    const started = await sessions.start("node", ["--name", "sup1", "--port", String(port)]);
    expect(started.started).toBe(true);
    const supervisor = started.state.pid as number;
    const first = await recordWhen("the first start's record", (r) => r.pid !== undefined);
    expect(first).toMatchObject({ restarts: 0, backoffMs: 0 });
    expect(first.lastExitAt).toBeUndefined();
    expect(first.pid).not.toBe(supervisor);

    // Killed three times in quick succession: the waits grow 300, 600, 1200 ms (the longest).
    let child = first.pid as number;
    for (const [restarts, wait] of [
      [1, 300],
      [2, 600],
      [3, 1_200],
    ] as const) {
      process.kill(child, "SIGKILL");
      const waiting = await recordWhen(
        `the wait after exit ${restarts}`,
        (r) => r.nextStartAt !== undefined && r.restarts === restarts - 1,
      );
      expect(waiting).toMatchObject({ lastExitStatus: 137, backoffMs: wait });
      expect((waiting.nextStartAt as number) - (waiting.lastExitAt as number)).toBe(wait);
      expect(waiting.pid).toBeUndefined();
      const again = await recordWhen(`restart ${restarts}`, (r) => r.restarts === restarts && r.pid !== undefined);
      expect(again.pid).not.toBe(child);
      expect(again.startedAt as number).toBeGreaterThanOrEqual(waiting.nextStartAt as number);
      child = again.pid as number;
    }
    // The supervisor is the same process throughout; the session never went.
    expect((await sessions.status("node")).pid).toBe(supervisor);

    // A run longer than stableMs: the next exit waits the initial 300 ms again. SIGTERM this time: the
    // Node ends cleanly (status 0) and says so, and even a clean exit is restarted.
    await recordWhen("a stable run", (r) => r.startedAt !== undefined && Date.now() - r.startedAt >= TIMINGS.stableMs);
    process.kill(child, "SIGTERM");
    const reset = await recordWhen(
      "the wait after a stable run",
      (r) => r.nextStartAt !== undefined && r.restarts === 3,
    );
    expect(reset).toMatchObject({ lastExitStatus: 0, backoffMs: 300 });
    expect(reset.lastLines?.join("\n")).toContain(`listening on http://127.0.0.1:${port}`);

    // The CLI says it all: restarts, the last exit with its time, and the output before it.
    const restarted = await recordWhen("restart 4", (r) => r.restarts === 4 && r.pid !== undefined);
    const status = await runCli(["system", "status", "node"], env);
    expect(status.code).toBe(0);
    const lines = status.stdout.split("\n");
    expect(lines[0]).toMatch(
      new RegExp(`^staragent-node: running \\(pid ${supervisor} since \\S+, http://127\\.0\\.0\\.1:${port}\\)$`),
    );
    expect(lines[1]).toBe(
      `  restarted 4 times; it last exited with status 0 at ${new Date(restarted.lastExitAt as number).toISOString()}; its last output then:`,
    );
    expect(lines.slice(2).join("\n")).toContain("listening on");

    // Answering again on its port, through the Node's API: the Session of its own system session
    // shows the restarts, the last exit and the output before it.
    const api = grpcClient(SessionService, `http://127.0.0.1:${port}`, token);
    const session = await waitFor(async () => {
      const res = await api.listSessions({ parent: "nodes/sup1" }).catch(() => undefined);
      const s = res?.sessions.find((x) => x.tmuxSession === "staragent-node");
      return s?.supervision?.restarts === 4 && s;
    }, "the restarted Node to list its own session with the restarts");
    expect(session.supervision).toMatchObject({ restarts: 4, lastExitStatus: 0 });
    expect(session.supervision?.lastLines).toEqual(reset.lastLines);
    expect(session.supervision?.lastExitTime?.seconds).toBe(BigInt(Math.floor((reset.lastExitAt as number) / 1000)));

    // Stop ends the supervisor and the service with it, and restarts nothing.
    const before: SystemState = await sessions.stop("node");
    expect(before.state).toBe("running");
    expect([await running(supervisor), await running(restarted.pid as number)]).toEqual([false, false]);
    expect((await sessions.status("node")).state).toBe("stopped");
  }, 120_000);
});
