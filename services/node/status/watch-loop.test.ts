import { randomUUID } from "node:crypto";
import { appendFile, mkdir, mkdtemp, readdir, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type Session, SessionStatus, StatusReason } from "../../../gen/staragent/v1/session_pb.js";
import { WatchEventType, type WatchSessionsResponse } from "../../../gen/staragent/v1/session_service_pb.js";
import { createTestTmux, type TestTmux } from "../../../test/support/tmux.js";
import { waitFor } from "../../../test/support/wait.js";
import { createLogger } from "../../common/log.js";
import { createBuiltInAgents } from "../agents/registry.js";
import { Machine } from "../machine.js";
import { openStateFiles } from "../store/state-files.js";
import { StatusEngine } from "./engine.js";

const STAND_INS = join(import.meta.dirname, "../../../test/stand-ins");

/** Every session state a watcher was sent, newest last, by tmux name; and the names it was told went away. */
function collect(events: WatchSessionsResponse[]): { upserts: Map<string, Session[]>; removed: string[] } {
  const upserts = new Map<string, Session[]>();
  const removed: string[] = [];
  for (const event of events) {
    if (event.type === WatchEventType.REMOVED) removed.push(...event.removedNames);
    if (event.type !== WatchEventType.UPSERTED && event.type !== WatchEventType.SNAPSHOT) continue;
    for (const s of event.sessions) upserts.set(s.tmuxSession, [...(upserts.get(s.tmuxSession) ?? []), s]);
  }
  return { upserts, removed };
}

describe("the watch loop with file watches and settled sessions", () => {
  let tmux: TestTmux | undefined;
  let machine: Machine | undefined;
  let dir: string | undefined;
  const stop = new AbortController();

  afterEach(async () => {
    stop.abort();
    await machine?.close();
    await tmux?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("still reports log records, seen marks and sessions started and killed behind its back", async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), "sa-watch-loop-")));
    const home = join(dir, "user");
    const project = join(dir, "proj");
    await Promise.all([mkdir(home), mkdir(project), mkdir(join(dir, "staragent"))]);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      HOME: home,
      CODEX_HOME: join(home, ".codex"),
      PATH: `${STAND_INS}:${process.env.PATH}`,
      STANDIN_TURN_MS: "100",
    };
    const t = createTestTmux(env);
    tmux = t;
    const log = createLogger("test", "error");
    const m = new Machine({
      nodeName: "local",
      tmux: t.client,
      state: openStateFiles(join(dir, "staragent"), log),
      inspector: new StatusEngine({ tmux: t.client, agents: createBuiltInAgents(), nodeEnv: env }),
      log,
    });
    machine = m;
    await m.createSession({ sessionId: "agent", cwd: project, command: ["codex"] });
    const events: WatchSessionsResponse[] = [];
    const watching = (async () => {
      for await (const event of m.watch(stop.signal)) events.push(event);
    })();
    const latest = () => collect(events).upserts.get("agent")?.at(-1);
    await waitFor(() => latest()?.statusReason === StatusReason.NO_TURN, "the fresh codex session");
    // Codex keeps a native log even before the first prompt creates it (chat confirms by it).
    expect(m.sessionContext("agent")?.observation?.hasNativeLog).toBe(true);

    await t.run("send-keys", "-t", "=agent:", "-l", "hello");
    await t.run("send-keys", "-t", "=agent:", "Enter");
    const done = await waitFor(() => {
      const s = latest();
      return s?.statusReason === StatusReason.UNSEEN_COMPLETION && s;
    }, "the completed first turn");

    await m.markSeen("agent", done.completionId);
    await waitFor(() => latest()?.statusReason === StatusReason.SEEN_COMPLETION, "the seen mark");

    // The session is settled now: a record appended to its rollout must still reach the watcher.
    const folder = join(home, ".codex", "sessions");
    const rollout = (await readdir(folder, { recursive: true })).find((f) => f.endsWith(".jsonl"));
    expect(rollout).toBeDefined();
    const turnId = randomUUID();
    const record = (type: string) =>
      `${JSON.stringify({ timestamp: new Date().toISOString(), type: "event_msg", payload: { type, turn_id: turnId } })}\n`;
    await appendFile(join(folder, rollout ?? ""), record("task_started"));
    await waitFor(() => latest()?.status === SessionStatus.WORKING, "working after task_started");
    await appendFile(join(folder, rollout ?? ""), record("task_complete"));
    const again = await waitFor(() => {
      const s = latest();
      return s?.statusReason === StatusReason.UNSEEN_COMPLETION && s;
    }, "review after task_complete");
    expect(again.completionId).toBe(turnId);

    await t.run("new-session", "-d", "-s", "outside", "sleep 600");
    await waitFor(() => collect(events).upserts.has("outside"), "the session started outside");
    await t.run("kill-session", "-t", "=outside");
    await waitFor(() => collect(events).removed.includes("nodes/local/sessions/outside"), "the session killed outside");
    stop.abort();
    await watching;
  });
});
