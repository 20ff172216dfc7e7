import { spawn } from "node:child_process";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli, type ServerProcess, STARAGENT_BIN, startServerProcess } from "../../test/support/servers.js";
import { createTestTmux, type TestTmux } from "../../test/support/tmux.js";
import { waitFor } from "../../test/support/wait.js";

const STAND_INS = join(import.meta.dirname, "../../test/stand-ins");
const TOKEN = "adopt-watch-token";

describe("staragent adopt and watch against a real Hub", () => {
  let tmux: TestTmux | undefined;
  let hub: ServerProcess | undefined;
  let dir: string | undefined;
  let watcher: ReturnType<typeof spawn> | undefined;

  afterEach(async () => {
    if (watcher && watcher.exitCode === null) {
      const exited = new Promise((r) => watcher?.once("exit", r));
      watcher.kill("SIGTERM");
      await exited;
    }
    await hub?.stop();
    await tmux?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("lists a claude session started outside StarAgent, adopts it, and watch prints its status", async () => {
    dir = await mkdtemp(join(tmpdir(), "sa-adopt-"));
    const project = join(dir, "proj");
    await mkdir(project);
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: dir, PATH: `${STAND_INS}:${process.env.PATH}` };
    delete env.CLAUDE_CONFIG_DIR;
    const t = createTestTmux(env);
    tmux = t;
    await t.run("new-session", "-d", "-s", "mine", "-c", project, "--", "claude");
    hub = await startServerProcess({ kind: "hub", tmuxSocket: t.socketName, token: TOKEN, env });
    const cliEnv = { STARAGENT_URL: hub.url, STARAGENT_AUTH_TOKEN: TOKEN, HOME: dir };

    // The session ran before the Hub started: one listing must find it (each CLI run costs seconds).
    const listed = await runCli(["adopt"], cliEnv);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/nodes\/local\/sessions\/mine {2}claude {2}/);

    const adopted = await runCli(["adopt", "mine"], cliEnv);
    expect(adopted).toMatchObject({ code: 0, stdout: "adopted nodes/local/sessions/mine\n" });
    const ls = await runCli(["ls", "--json"], cliEnv);
    const sessions = (JSON.parse(ls.stdout) as { sessions: { tmuxSession: string; origin: string }[] }).sessions;
    expect(sessions.find((s) => s.tmuxSession === "mine")?.origin).toBe("SESSION_ORIGIN_ADOPTED");

    const bad = await runCli(["adopt", "no-such"], cliEnv);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("NotFound");

    let out = "";
    const w = spawn(process.execPath, [STARAGENT_BIN, "watch"], {
      env: { ...process.env, ...cliEnv },
      stdio: ["ignore", "pipe", "pipe"],
    });
    watcher = w;
    w.stdout?.on("data", (c: Buffer) => {
      out += c.toString();
    });
    await waitFor(() => /mine {2}idle\/no-turn {2}claude/.test(out), "watch to print the current state");
    await t.run("send-keys", "-t", "=mine:", "-l", "hello");
    await t.run("send-keys", "-t", "=mine:", "Enter");
    await waitFor(
      () => /mine {2}review\/unseen-completion {2}claude {2}completion=\S+/.test(out),
      "watch to print the completion",
    );
    expect(out.split("\n").filter((l) => l.includes("  mine  ")).length).toBeGreaterThanOrEqual(2);
  }, 90_000);
});
