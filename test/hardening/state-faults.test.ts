import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SessionOrigin } from "../../gen/staragent/v1/session_pb.js";
import { SessionService } from "../../gen/staragent/v1/session_service_pb.js";
import { failureOf, grpcClient, testToken } from "../foundation/hub-fixture.js";
import { type ServerProcess, startServerProcess, withoutFilePermissionOverride } from "../support/servers.js";
import { createTestTmux, type TestTmux } from "../support/tmux.js";

/** A state file far over the size limit (sparse: it takes no disk space). */
const HUGE_BYTES = 600 * 1024 * 1024;
/** Calls made against the bad files: each must succeed, and none may read a file again. */
const CALLS = 20;
/** What the Node may read in CALLS calls (its own code, /proc): far below one huge file. */
const READ_BUDGET_BYTES = 64 * 1024 * 1024;

/** Bytes a process has read through read(2) and friends so far (`rchar` in /proc/<pid>/io). */
async function bytesRead(pid: number): Promise<number> {
  const io = await readFile(`/proc/${pid}/io`, "utf8");
  return Number(/^rchar: (\d+)$/m.exec(io)?.[1]);
}

describe("a Node's state files: unreadable, in the way, huge, on a read-only home", () => {
  let tmux: TestTmux | undefined;
  let node: ServerProcess | undefined;
  let home: string | undefined;
  afterEach(async () => {
    await node?.stop();
    await tmux?.close();
    if (home) {
      await chmod(home, 0o700);
      await rm(home, { recursive: true, force: true });
    }
  });

  async function startNode(): Promise<ServerProcess> {
    node = await startServerProcess({
      kind: "node",
      tmuxSocket: (tmux as TestTmux).socketName,
      token: testToken(),
      args: ["--name", "n1"],
      home,
      wrapper: withoutFilePermissionOverride(),
    });
    return node;
  }

  it("moves unusable files aside with their content, logs each once, and keeps serving", async () => {
    home = await mkdtemp(join(tmpdir(), "sa-state-"));
    tmux = createTestTmux();
    await tmux.run("new-session", "-d", "-s", "by-hand", "sleep 600");
    // A folder where adopted_sessions.json belongs, with something of the user's inside.
    await mkdir(join(home, "adopted_sessions.json"));
    await writeFile(join(home, "adopted_sessions.json", "notes.txt"), "mine");
    // seen.json nobody may read.
    await writeFile(join(home, "seen.json"), "unreadable");
    await chmod(join(home, "seen.json"), 0o000);
    const running = await startNode();
    const sessions = grpcClient(SessionService, running.url, running.token);

    for (let i = 0; i < CALLS; i++) {
      const listed = await sessions.listSessions({ parent: "nodes/n1" });
      expect(listed.sessions.map((s) => s.tmuxSession)).toEqual(["by-hand"]);
    }
    const names = await readdir(home);
    const adoptedAside = names.filter((n) => n.startsWith("adopted_sessions.json.corrupt-"));
    const seenAside = names.filter((n) => n.startsWith("seen.json.corrupt-"));
    expect(adoptedAside).toHaveLength(1);
    expect(seenAside).toHaveLength(1);
    expect(await readFile(join(home, adoptedAside[0] ?? "", "notes.txt"), "utf8")).toBe("mine");
    expect(await readFile(join(home, seenAside[0] ?? ""), "utf8")).toBe("unreadable");
    const warnings = running
      .stderr()
      .split("\n")
      .filter((l) => l.includes("kept aside"));
    expect(warnings.filter((l) => l.includes("adopted_sessions.json"))).toHaveLength(1);
    expect(warnings.filter((l) => l.includes("seen.json"))).toHaveLength(1);

    // The replaced files work: adopting writes a fresh adopted_sessions.json.
    const adopted = await sessions.adoptSession({ name: "nodes/n1/sessions/by-hand" });
    expect(adopted.session?.origin).toBe(SessionOrigin.ADOPTED);
    expect(JSON.parse(await readFile(join(home, "adopted_sessions.json"), "utf8")).sessions).toHaveLength(1);
  });

  it("on a read-only home: serves without reading a huge file again, and stops nothing it cannot record", async () => {
    home = await mkdtemp(join(tmpdir(), "sa-state-"));
    tmux = createTestTmux();
    await tmux.run("new-session", "-d", "-s", "adoptee", "sleep 600");
    const created = Number((await tmux.run("display-message", "-p", "-t", "=adoptee:", "#{session_created}")).trim());
    const adoptedFile = `${JSON.stringify({
      version: 1,
      sessions: [{ tmuxSession: "adoptee", sessionCreated: created, adoptTime: "2026-01-01T00:00:00Z", cli: "" }],
    })}\n`;
    await writeFile(join(home, "adopted_sessions.json"), adoptedFile);
    await writeFile(join(home, "seen.json"), "");
    await truncate(join(home, "seen.json"), HUGE_BYTES);
    await chmod(home, 0o500);
    const running = await startNode();
    const pid = running.process.pid ?? 0;
    const sessions = grpcClient(SessionService, running.url, running.token);

    const before = await bytesRead(pid);
    for (let i = 0; i < CALLS; i++) {
      const listed = await sessions.listSessions({ parent: "nodes/n1" });
      expect(listed.sessions.map((s) => [s.tmuxSession, s.origin])).toEqual([["adoptee", SessionOrigin.ADOPTED]]);
    }
    expect((await bytesRead(pid)) - before).toBeLessThan(READ_BUDGET_BYTES);
    const stuck = running
      .stderr()
      .split("\n")
      .filter((l) => l.includes("could not be kept aside"));
    expect(stuck).toHaveLength(1);
    expect(stuck[0]).toMatch(/seen\.json.*larger than/);
    expect((await stat(join(home, "seen.json"))).size).toBe(HUGE_BYTES);

    const failure = await failureOf(sessions.stopSession({ name: "nodes/n1/sessions/adoptee", force: true }));
    expect(failure.code).toBe("FailedPrecondition");
    expect(failure.message).toMatch(/^cannot write .*adopted_sessions\.json .*make .* writable$/);
    expect((await tmux.run("list-sessions", "-F", "#{session_name}")).trim()).toBe("adoptee");
    expect(await readFile(join(home, "adopted_sessions.json"), "utf8")).toBe(adoptedFile);
  });
});
