import { chmod, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionOrigin, SessionType } from "../../gen/staragent/v1/session_pb.js";
import { WatchEventType } from "../../gen/staragent/v1/session_service_pb.js";
import { runCli } from "../support/servers.js";
import { waitFor } from "../support/wait.js";
import { failureOf, type HubFixture, startHubFixture } from "./hub-fixture.js";
import { readWatch } from "./watch-events.js";

/** argv of a process, from /proc. */
async function argvOf(pid: number): Promise<string[]> {
  return (await readFile(`/proc/${pid}/cmdline`, "utf8")).split("\0").slice(0, -1);
}

/**
 * argv of the command a created session's pane runs: the child of its `staragent-run` wrapper (which
 * stays, to keep the pane when the command exits), once the wrapper has started it.
 */
async function execedArgvOf(pid: number): Promise<string[]> {
  return waitFor(async () => {
    const argv = await argvOf(pid);
    if (argv[3] !== "staragent-run") return argv;
    const children = (await readFile(`/proc/${pid}/task/${pid}/children`, "utf8").catch(() => "")).trim().split(/\s+/);
    const child = Number(children[0]);
    return child > 0 ? await argvOf(child).catch(() => undefined) : undefined;
  }, `process ${pid} to start its command`);
}

describe("sessions through a real Hub process", () => {
  let f: HubFixture;
  beforeAll(async () => {
    f = await startHubFixture();
    await f.tmux.run("new-session", "-d", "-s", "by-hand", "-c", f.dir, "sleep 600");
  });
  afterAll(async () => {
    await f?.close();
  });

  const panePid = async (session: string) =>
    Number((await f.tmux.run("list-panes", "-t", `=${session}:`, "-F", "#{pane_pid}")).trim());
  const tmuxSessions = async () => (await f.tmux.run("list-sessions", "-F", "#{session_name}")).split("\n").sort();

  it("`staragent ls` shows a session started by hand, as a table and as JSON", async () => {
    const table = await runCli(["ls"], f.cliEnv);
    expect(table.stderr).toBe("");
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^SESSION\s+STATUS\s+REASON\s+CLI\s+CONTEXT\s+TYPE\s+ORIGIN\s+ACTIVE\s+CWD$/);
    expect(lines.find((l) => l.startsWith("by-hand "))).toMatch(/\sagent\s+unmanaged\s.*\s\/\S+$/);

    const json = await runCli(["ls", "--json"], f.cliEnv);
    expect(json.code).toBe(0);
    const parsed = JSON.parse(json.stdout) as { sessions: Record<string, unknown>[]; unreachable: string[] };
    expect(parsed.unreachable).toEqual([]);
    expect(parsed.sessions.find((s) => s.name === "nodes/local/sessions/by-hand")).toMatchObject({
      node: "local",
      tmuxSession: "by-hand",
      type: "SESSION_TYPE_AGENT",
      origin: "SESSION_ORIGIN_UNMANAGED",
      cwd: f.dir,
    });
  });

  it("`staragent new` creates a session running the command in the cwd, and `stop` ends it", async () => {
    const created = await runCli(["new", "cli-made", "--cwd", f.dir, "--", "sleep", "600"], f.cliEnv);
    expect(created).toMatchObject({ code: 0, stdout: "created nodes/local/sessions/cli-made\n" });
    const { session } = await f.sessions.getSession({ name: "nodes/local/sessions/cli-made" });
    expect(session).toMatchObject({ origin: SessionOrigin.CREATED, type: SessionType.AGENT, cwd: f.dir });
    expect(await execedArgvOf(await panePid("cli-made"))).toEqual(["sleep", "600"]);

    const stopped = await runCli(["stop", "cli-made"], f.cliEnv);
    expect(stopped).toMatchObject({ code: 0, stdout: "stopped nodes/local/sessions/cli-made\n" });
    expect(await tmuxSessions()).not.toContain("cli-made");
  });

  it("stops unmanaged and adopted sessions only with force, and system sessions never", async () => {
    await f.tmux.run("new-session", "-d", "-s", "other", "sleep 600");
    await f.tmux.run("new-session", "-d", "-s", "adoptee", "sleep 600");
    await f.tmux.run("new-session", "-d", "-s", "staragent-node", "sleep 600");
    const adopted = await f.sessions.adoptSession({ name: "nodes/local/sessions/adoptee" });
    expect(adopted.session?.origin).toBe(SessionOrigin.ADOPTED);

    const refused = await runCli(["stop", "other"], f.cliEnv);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^staragent stop: FailedPrecondition: other was not created by StarAgent;.*force/);
    expect(await failureOf(f.sessions.stopSession({ name: "nodes/local/sessions/adoptee" }))).toMatchObject({
      code: "FailedPrecondition",
      message: expect.stringMatching(/adoptee was adopted; stop it with force/),
    });
    expect(await tmuxSessions()).toEqual(expect.arrayContaining(["other", "adoptee"]));

    expect((await runCli(["stop", "other", "--force"], f.cliEnv)).code).toBe(0);
    await f.sessions.stopSession({ name: "nodes/local/sessions/adoptee", force: true });
    expect(await tmuxSessions()).not.toEqual(expect.arrayContaining(["other"]));
    expect(await tmuxSessions()).not.toEqual(expect.arrayContaining(["adoptee"]));
    const adoptedFile = JSON.parse(await readFile(join(f.hub.home, "adopted_sessions.json"), "utf8"));
    expect(adoptedFile.sessions).toEqual([]);

    const system = await f.sessions.getSession({ name: "nodes/local/sessions/staragent-node" });
    expect(system.session).toMatchObject({ type: SessionType.SYSTEM, origin: SessionOrigin.SYSTEM });
    expect(
      await failureOf(f.sessions.stopSession({ name: "nodes/local/sessions/staragent-node", force: true })),
    ).toMatchObject({ code: "FailedPrecondition" });
    expect(await tmuxSessions()).toContain("staragent-node");
  });

  it.each([
    ["every node as the parent", { parent: "nodes/-" }, "parent"],
    ["a malformed parent", { parent: "local" }, "parent"],
    ["a bad session name", { sessionId: "bad name" }, "session_id"],
    ["an empty session name", { sessionId: "" }, "session_id"],
    ["a missing cwd", { cwd: "" }, "cwd"],
    ["a relative cwd", { cwd: "relative/dir" }, "cwd"],
    ["a cwd that does not exist", { cwd: "/nonexistent/staragent-test" }, "cwd"],
    ["a command of 65 arguments", { command: Array.from({ length: 65 }, () => "x") }, "command"],
    ["a command over 8192 bytes", { command: ["echo", "x".repeat(8192)] }, "command"],
  ])("refuses %s with INVALID_ARGUMENT naming the field", async (_what, change, field) => {
    const request = {
      parent: "nodes/local",
      sessionId: "valid-name",
      cwd: f.dir,
      command: ["sleep", "600"],
      ...change,
    };
    const failure = await failureOf(f.sessions.createSession(request));
    expect(failure.code).toBe("InvalidArgument");
    expect(failure.message.startsWith(`${field}: `)).toBe(true);
    expect(await tmuxSessions()).not.toContain("valid-name");
  });

  it("accepts a command of exactly 64 arguments and 8192 bytes", async () => {
    const head = ["sh", "-c", "sleep 600"];
    const rest = Array.from({ length: 61 }, () => "a");
    const used = [...head, ...rest].reduce((n, a) => n + Buffer.byteLength(a), 0);
    rest[0] = "a".repeat(8192 - used + 1);
    const command = [...head, ...rest];
    expect(command).toHaveLength(64);
    expect(command.reduce((n, a) => n + Buffer.byteLength(a), 0)).toBe(8192);
    const res = await f.sessions.createSession({ parent: "nodes/local", sessionId: "at-limits", cwd: f.dir, command });
    expect(res.session?.tmuxSession).toBe("at-limits");
    expect(await execedArgvOf(await panePid("at-limits"))).toEqual(command);
  });

  it("refuses an existing name with ALREADY_EXISTS", async () => {
    expect(
      await failureOf(
        f.sessions.createSession({ parent: "nodes/local", sessionId: "by-hand", cwd: f.dir, command: ["sleep", "1"] }),
      ),
    ).toMatchObject({ code: "AlreadyExists", message: expect.stringMatching(/^session_id: /) });
    const cli = await runCli(["new", "by-hand", "--cwd", f.dir, "--", "sleep", "1"], f.cliEnv);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toMatch(/AlreadyExists: session_id: a session named by-hand already exists/);
  });

  it("answers NOT_FOUND for unknown sessions and unknown nodes", async () => {
    const calls = [
      () => f.sessions.getSession({ name: "nodes/local/sessions/ghost" }),
      () => f.sessions.stopSession({ name: "nodes/local/sessions/ghost", force: true }),
      () => f.sessions.getSession({ name: "nodes/ghost/sessions/a" }),
      () => f.sessions.createSession({ parent: "nodes/ghost", sessionId: "a", cwd: f.dir, command: ["sleep", "1"] }),
      () => f.sessions.listSessions({ parent: "nodes/ghost" }),
    ];
    for (const call of calls) expect((await failureOf(call())).code).toBe("NotFound");
    const cli = await runCli(["stop", "ghost"], f.cliEnv);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toMatch(/NotFound: session nodes\/local\/sessions\/ghost not found/);
  });

  it("passes ';' arguments literally: never a tmux command, server and sessions survive", async () => {
    const command = ["sh", "-c", "sleep 600 & wait", ";", "kill-server", "kill-server;", ";", "a;b", "end\\;"];
    const res = await f.sessions.createSession({ parent: "nodes/local", sessionId: "semi", cwd: f.dir, command });
    expect(res.session?.tmuxSession).toBe("semi");
    const pid = await panePid("semi");
    expect(await execedArgvOf(pid)).toEqual(command);
    expect(await tmuxSessions()).toEqual(expect.arrayContaining(["by-hand", "semi"]));
    expect((await f.sessions.getSession({ name: "nodes/local/sessions/by-hand" })).session?.tmuxSession).toBe(
      "by-hand",
    );
  });

  it("runs a single argument with shell metacharacters as a program path, not shell code", async () => {
    const program = "./run $(touch pwned); touch pwned2 &&";
    await writeFile(join(f.dir, program), "#!/bin/sh\nexec sleep 600\n");
    await chmod(join(f.dir, program), 0o755);
    await f.sessions.createSession({ parent: "nodes/local", sessionId: "meta", cwd: f.dir, command: [program] });
    const pid = await panePid("meta");
    await waitFor(async () => (await execedArgvOf(pid))[0] === "sleep", "the program to run");
    await expect(stat(join(f.dir, "pwned"))).rejects.toThrow(/ENOENT/);
    await expect(stat(join(f.dir, "pwned2"))).rejects.toThrow(/ENOENT/);
  });

  it("pages through ListSessions and refuses bad page tokens and sizes", async () => {
    for (const name of ["page-1", "page-2", "page-3", "page-4", "page-5"]) {
      await f.tmux.run("new-session", "-d", "-s", name, "sleep 600");
    }
    const all = (await f.sessions.listSessions({ parent: "nodes/-" })).sessions.map((s) => s.name);
    expect(all).toEqual(expect.arrayContaining(["nodes/local/sessions/page-1", "nodes/local/sessions/page-5"]));
    const paged: string[] = [];
    let pageToken = "";
    let pages = 0;
    do {
      const res = await f.sessions.listSessions({ parent: "nodes/-", pageSize: 2, pageToken });
      expect(res.sessions.length).toBeLessThanOrEqual(2);
      paged.push(...res.sessions.map((s) => s.name));
      pageToken = res.nextPageToken;
      pages++;
    } while (pageToken !== "");
    expect(paged).toEqual(all);
    expect(pages).toBe(Math.ceil(all.length / 2));

    const first = await f.sessions.listSessions({ parent: "nodes/-", pageSize: 2 });
    expect(
      await failureOf(f.sessions.listSessions({ parent: "nodes/-", pageSize: 2, pageToken: "bogus" })),
    ).toMatchObject({ code: "InvalidArgument", message: expect.stringMatching(/^page_token: /) });
    expect(
      await failureOf(
        f.sessions.listSessions({ parent: "nodes/-", filter: "type=agent", pageToken: first.nextPageToken }),
      ),
    ).toMatchObject({ code: "InvalidArgument", message: expect.stringMatching(/^page_token: /) });
    expect(await failureOf(f.sessions.listSessions({ parent: "nodes/-", pageSize: 100_000 }))).toMatchObject({
      code: "InvalidArgument",
      message: expect.stringMatching(/^page_size: /),
    });
  });

  it("filters ListSessions and refuses a bad filter term", async () => {
    await f.tmux.run("new-session", "-d", "-s", "staragent-hub", "sleep 600");
    const system = await f.sessions.listSessions({ parent: "nodes/-", filter: "type=system" });
    expect(system.sessions.map((s) => s.tmuxSession)).toEqual(["staragent-hub", "staragent-node"]);
    const agents = await f.sessions.listSessions({ parent: "nodes/local", filter: "type=agent" });
    expect(agents.sessions.map((s) => s.tmuxSession)).toContain("by-hand");
    expect(agents.sessions.every((s) => s.type === SessionType.AGENT)).toBe(true);
    expect(await failureOf(f.sessions.listSessions({ parent: "nodes/-", filter: "colour=blue" }))).toMatchObject({
      code: "InvalidArgument",
      message: expect.stringMatching(/^filter: "colour=blue" is not understood/),
    });
  });

  it("watches: a SNAPSHOT, then UPSERTED and REMOVED for sessions made and killed by hand", async () => {
    const watch = readWatch((signal) => f.sessions.watchSessions({ parent: "nodes/-" }, { signal }));
    try {
      const snapshot = await watch.next(() => true, "the first event");
      expect(snapshot.type).toBe(WatchEventType.SNAPSHOT);
      expect(snapshot.sessions.map((s) => s.tmuxSession)).toContain("by-hand");

      await f.tmux.run("new-session", "-d", "-s", "watched", "sleep 600");
      const upserted = await watch.next(
        (e) => e.type === WatchEventType.UPSERTED && e.sessions.some((s) => s.tmuxSession === "watched"),
        "UPSERTED for the new session",
      );
      expect(upserted.sessions.find((s) => s.tmuxSession === "watched")?.name).toBe("nodes/local/sessions/watched");

      await f.tmux.run("kill-session", "-t", "=watched");
      const removed = await watch.next((e) => e.type === WatchEventType.REMOVED, "REMOVED for the killed session");
      expect(removed.removedNames).toEqual(["nodes/local/sessions/watched"]);
    } finally {
      await watch.close();
    }
  });
});
