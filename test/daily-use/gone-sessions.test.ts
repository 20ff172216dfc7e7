import { mkdir, mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatRole, Cli } from "../../gen/staragent/v1/session_pb.js";
import type { SessionService } from "../../gen/staragent/v1/session_service_pb.js";
import { SessionService as Service } from "../../gen/staragent/v1/session_service_pb.js";
import { failureOf, grpcClient, testToken } from "../foundation/hub-fixture.js";
import { type ServerProcess, startServerProcess } from "../support/servers.js";
import { standInEnv } from "../support/stand-in-env.js";
import { createTestTmux, type TestTmux } from "../support/tmux.js";
import { waitFor } from "../support/wait.js";

/**
 * A session that went outside StopSession (`tmux kill-session` by hand) while an agent with its
 * native log bound ran in it is kept in the list as ended (exit status unset), its chat read from
 * that log, until StopSession dismisses it or the keep time passes; a restarted Hub still knows it
 * (gone_sessions.json under $STARAGENT_HOME). Through real Hub processes on a private tmux server,
 * with the claude stand-in.
 */
describe("sessions killed from outside", () => {
  let dir: string;
  let tmux: TestTmux;
  let hub: ServerProcess | undefined;
  let sessions: Client<typeof SessionService>;
  const token = testToken();
  let env: NodeJS.ProcessEnv;

  const start = async (extra: NodeJS.ProcessEnv = {}) => {
    hub = await startServerProcess({
      kind: "hub",
      tmuxSocket: tmux.socketName,
      token,
      home: join(dir, "home"),
      env: { ...env, ...extra },
    });
    sessions = grpcClient(Service, hub.url, token);
  };
  const listed = async (id: string) =>
    (await sessions.listSessions({ parent: "nodes/local" })).sessions.find((s) => s.tmuxSession === id);

  beforeAll(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), "sa-gone-")));
    await Promise.all(["user", "home", "project"].map((d) => mkdir(join(dir, d))));
    env = standInEnv(join(dir, "user"));
    tmux = createTestTmux(env);
    await start();
    // A session that outlives the tests' own, so the tmux server never exits between them.
    await sessions.createSession({ parent: "nodes/local", sessionId: "keeper", cwd: dir, command: ["sleep", "3600"] });
  });
  afterAll(async () => {
    await hub?.stop();
    await tmux?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Starts claude in `id` (created, or by hand), has one turn answered, so its log is bound. */
  async function converse(id: string, byHand: boolean): Promise<string> {
    const name = `nodes/local/sessions/${id}`;
    const cwd = join(dir, "project");
    if (byHand) await tmux.run("new-session", "-d", "-s", id, "-c", cwd, "claude");
    else await sessions.createSession({ parent: "nodes/local", sessionId: id, cwd, command: ["claude"] });
    await waitFor(
      async () => (await tmux.run("capture-pane", "-p", "-t", `=${id}:`)).includes("? for shortcuts"),
      `${id}'s input box`,
    );
    await sessions.sendChatMessage({ name, text: `hello ${id}` });
    await waitFor(
      async () => (await sessions.getChat({ name })).messages.some((m) => m.text === `Done: hello ${id}`),
      `${id}'s answer`,
    );
    return name;
  }

  it("keeps a created session killed by hand as ended, its chat readable, across a restart, until dismissed", async () => {
    const name = await converse("victim", false);
    await tmux.run("kill-session", "-t", "=victim");
    const ended = await waitFor(async () => {
      const s = await listed("victim");
      return s?.ended && s;
    }, "victim listed as ended");
    expect(ended.ended?.exitStatus).toBeUndefined();
    expect(ended.cli).toBe(Cli.CLAUDE);
    expect(Number(ended.ended?.endTime?.seconds)).toBeGreaterThan(Date.now() / 1000 - 60);
    // The screen as last read (at most LAST_LINES_EVERY_MS old): the conversation was on it.
    expect(ended.ended?.lastLines.join("\n")).toContain("hello victim");
    const texts = async () =>
      (await sessions.getChat({ name })).messages.filter((m) => m.role !== ChatRole.SYSTEM).map((m) => m.text);
    expect(await texts()).toEqual(expect.arrayContaining(["hello victim", "Done: hello victim"]));
    expect(await failureOf(sessions.sendChatMessage({ name, text: "still there?" }))).toMatchObject({
      code: "FailedPrecondition",
    });

    // The Hub restarts: it still lists it, with its chat.
    await hub?.stop();
    await start();
    expect((await listed("victim"))?.ended?.endTime).toEqual(ended.ended?.endTime);
    expect(await texts()).toEqual(expect.arrayContaining(["hello victim", "Done: hello victim"]));

    // Dismissed by a person: gone, also after another restart.
    await sessions.stopSession({ name });
    expect(await listed("victim")).toBeUndefined();
    expect(await failureOf(sessions.getSession({ name }))).toMatchObject({ code: "NotFound" });
    await hub?.stop();
    await start();
    expect(await listed("victim")).toBeUndefined();
  });

  it("keeps a session made by hand and killed by hand, never one stopped through StopSession", async () => {
    await converse("by-hand", true);
    const stoppedName = await converse("stopped", false);
    await sessions.stopSession({ name: stoppedName });
    await tmux.run("kill-session", "-t", "=by-hand");
    const byHand = await waitFor(async () => (await listed("by-hand"))?.ended, "by-hand listed as ended");
    expect(byHand.exitStatus).toBeUndefined();
    expect(await listed("stopped")).toBeUndefined();
    // A new session of the same name is the live one: the ended one is forgotten.
    await tmux.run("new-session", "-d", "-s", "by-hand", "sleep 3600");
    await waitFor(async () => {
      const s = await listed("by-hand");
      return s && !s.ended;
    }, "the new by-hand live");
    await tmux.run("kill-session", "-t", "=by-hand");
    await waitFor(async () => (await listed("by-hand")) === undefined, "the shell session gone, not kept");
  });

  it("removes it once the keep time has passed", async () => {
    await hub?.stop();
    // 0.001 h: an ended session goes after 3.6 s.
    await start({ STARAGENT_KEEP_ENDED_HOURS: "0.001" });
    await converse("brief", false);
    await tmux.run("kill-session", "-t", "=brief");
    const ended = await waitFor(async () => (await listed("brief"))?.ended, "brief listed as ended");
    const endedMs = Number(ended.endTime?.seconds) * 1000 + Math.floor((ended.endTime?.nanos ?? 0) / 1e6);
    const gone = await waitFor(
      async () => (await listed("brief")) === undefined && Date.now(),
      "brief to go after its keep time",
      15_000,
    );
    expect(gone - endedMs).toBeGreaterThanOrEqual(3_600);
  });
});
