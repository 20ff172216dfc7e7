import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SessionStatus, StatusReason } from "../../../../gen/staragent/v1/session_pb.js";
import { testPane } from "../../../../test/support/panes.js";
import { decideStatus } from "../../status/precedence.js";
import type { AgentContext } from "../agent.js";
import { CodexModule } from "./codex-module.js";

const THREAD_ID = "01a23429-2b89-7660-af5e-8be0fca8ad52";
const CWD = "/home/me/proj";
const temps: string[] = [];

afterAll(async () => {
  await Promise.all(temps.map((d) => rm(d, { recursive: true, force: true })));
});

/** A rollout of one finished turn that opened at `turnAt` (records as Codex 0.171 writes them). */
function rollout(turnAt: number): string {
  const at = (ms: number) => new Date(turnAt + ms).toISOString();
  const records = [
    { timestamp: at(-5_000), type: "session_meta", payload: { id: THREAD_ID, cwd: CWD, cli_version: "0.171.0" } },
    { timestamp: at(0), type: "event_msg", payload: { type: "task_started", turn_id: "turn-1" } },
    {
      timestamp: at(5),
      type: "event_msg",
      payload: { type: "item_completed", turn_id: "turn-1", item: { type: "UserMessage", content: [{ text: "hi" }] } },
    },
    { timestamp: at(120), type: "event_msg", payload: { type: "agent_message", message: "hello" } },
    { timestamp: at(130), type: "event_msg", payload: { type: "task_complete", turn_id: "turn-1" } },
  ];
  return `${records.map((r) => JSON.stringify(r)).join("\n")}\n`;
}

/** `codex resume THREAD_ID` started at `startMs` in a pane of CWD, with Codex's home under `home`. */
function resumedContext(home: string, startMs: number): AgentContext {
  const pane = testPane({
    sessionName: "resumed",
    paneCurrentCommand: "codex",
    paneCurrentPath: CWD,
    alternateOn: true,
    paneTitle: "proj",
  });
  return {
    pane,
    process: { pid: 4242, ppid: 4241, comm: "codex", argv: ["codex", "resume", THREAD_ID], startTicks: 1 },
    processStart: new Date(startMs),
    env: async () => ({ HOME: home }),
    screen: async () => "› Ask Codex to do anything",
    visibleScreen: async () => "proj\n› Ask Codex to do anything",
    siblings: [],
  };
}

/**
 * A conversation resumed moments after its last turn began (stop a session, resume it at once: the
 * compat scenario's "resumed" step on a fast machine) is idle with no turn: that turn is the earlier
 * run's, never this process's unseen completion. A turn this process opens after its start is its own.
 */
describe("Codex resumed right after its last turn", () => {
  const observe = async (turnAfterStartMs: number) => {
    const home = await mkdtemp(join(tmpdir(), "sa-codex-resumed-"));
    temps.push(home);
    const startMs = Date.now() - 60_000;
    const folder = join(home, ".codex", "sessions", "2026", "12", "02");
    await mkdir(folder, { recursive: true });
    await writeFile(
      join(folder, `rollout-2026-12-02T00-30-43-${THREAD_ID}.jsonl`),
      rollout(startMs + turnAfterStartMs),
    );
    const signals = await new CodexModule().observe(resumedContext(home, startMs));
    return { ...decideStatus(signals, ""), detail: signals.detail };
  };

  for (const before of [150, 400, 5_000]) {
    it(`reports no turn when the last turn opened ${before} ms before the process started`, async () => {
      const got = await observe(-before);
      expect([SessionStatus[got.status], StatusReason[got.reason]], got.detail).toEqual(["IDLE", "NO_TURN"]);
    });
  }

  it("reports the completion of a turn opened after the process started as unseen", async () => {
    const got = await observe(2_000);
    expect([SessionStatus[got.status], StatusReason[got.reason]], got.detail).toEqual(["REVIEW", "UNSEEN_COMPLETION"]);
  });
});
