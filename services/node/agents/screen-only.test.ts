import { symlink } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Cli, SessionStatus, StatusReason } from "../../../gen/staragent/v1/session_pb.js";
import { testPane } from "../../../test/support/panes.js";
import { eachTempDir } from "../../../test/support/temp-dir.js";
import { createTestTmux, type TestTmux } from "../../../test/support/tmux.js";
import { waitFor } from "../../../test/support/wait.js";
import { StatusEngine } from "../status/engine.js";
import { decideStatus } from "../status/precedence.js";
import { activePanes, listPanes } from "../tmux/panes.js";
import type { AgentContext, AgentModule } from "./agent.js";
import { AntigravityModule } from "./antigravity/antigravity-module.js";
import { CursorModule } from "./cursor/cursor-module.js";
import type { ProcessInfo } from "./process-table.js";
import { AgentRegistry } from "./registry.js";
import { SCREEN_ACTIVE_MS, SCREEN_STARTUP_MS, screenOnlySignals } from "./screen-only.js";

const STAND_IN = join(import.meta.dirname, "../../../test/stand-ins/screen-only-cli");
const PROCESS: ProcessInfo = { pid: 4242, ppid: 4241, comm: "cursor-agent", argv: ["cursor-agent"], startTicks: 77 };
const START_MS = Date.UTC(2026, 11, 7, 12, 0, 0);

/** A context whose window last printed at `printedAtS` (seconds since the epoch); nothing else is readable. */
function context(printedAtS: number): AgentContext {
  const unread = async (): Promise<string> => {
    throw new Error("a screen-only CLI's status reads no screen");
  };
  return {
    pane: testPane({ windowActivity: printedAtS }),
    process: PROCESS,
    processStart: new Date(START_MS),
    env: async () => ({}),
    screen: unread,
    visibleScreen: unread,
    siblings: [],
  };
}

function node(argv: string[]): ProcessInfo {
  return { pid: 1, ppid: 0, comm: "node", argv, startTicks: 1 };
}

describe("screenOnlySignals", () => {
  const startS = START_MS / 1000;

  it("takes output in the start-up time for the CLI's drawing, not a turn", () => {
    const signals = screenOnlySignals(context(startS + 4), "Cursor agent", START_MS + 60_000);
    expect(decideStatus(signals, "")).toEqual({ status: SessionStatus.IDLE, reason: StatusReason.NO_TURN });
    expect(signals.detail).toBe("screen only (no reader of Cursor agent's logs): nothing printed since it started");
  });

  it("is working while the window printed within SCREEN_ACTIVE_MS, and a completion once quiet", () => {
    const printedS = startS + 30;
    const printed = printedS * 1000;
    const working = screenOnlySignals(context(printedS), "Cursor agent", printed + SCREEN_ACTIVE_MS - 1);
    expect(decideStatus(working, "")).toEqual({ status: SessionStatus.WORKING, reason: StatusReason.ACTIVE_TURN });
    expect(working.detail).toBe("screen only (no reader of Cursor agent's logs): printing (3 s ago)");

    const quiet = screenOnlySignals(context(printedS), "Cursor agent", printed + SCREEN_ACTIVE_MS);
    expect(quiet.completionId).toBe(`screen:4242:77:${printedS}`);
    expect(decideStatus(quiet, "")).toEqual({ status: SessionStatus.REVIEW, reason: StatusReason.UNSEEN_COMPLETION });
    expect(decideStatus(quiet, quiet.completionId)).toEqual({
      status: SessionStatus.IDLE,
      reason: StatusReason.SEEN_COMPLETION,
    });
    expect(quiet.detail).toBe("screen only (no reader of Cursor agent's logs): quiet for 3 s");
    expect(quiet.lastActivity).toEqual(new Date(printed));
    expect(quiet.hasNativeLog).toBe(false);
    expect(quiet.paneOnly).toBe(true);

    // Another burst of output is another turn: seen once, the next one is unseen again.
    const next = screenOnlySignals(context(printedS + 20), "Cursor agent", printed + 60_000);
    expect(next.completionId).not.toBe(quiet.completionId);
    expect(decideStatus(next, quiet.completionId).status).toBe(SessionStatus.REVIEW);
  });

  it("holds start-up output apart only for SCREEN_STARTUP_MS", () => {
    const late = screenOnlySignals(context(startS + SCREEN_STARTUP_MS / 1000), "x", START_MS + 60_000);
    expect(late.turn).toBe("completed");
  });
});

describe("the screen-only modules' recognition", () => {
  const cursor = new CursorModule();
  const agy = new AntigravityModule();

  it("knows Cursor's agent by its name, and by its install folder when started through its `agent` link", () => {
    expect(cursor.recognises({ ...PROCESS, argv: ["/home/u/.local/bin/cursor-agent", "-p"] })).toBe(true);
    const shipped = "/home/u/.local/share/cursor-agent/versions/2026.11.20-abc/";
    expect(cursor.recognises(node([`${shipped}node`, "--use-system-ca", `${shipped}index.js`]))).toBe(true);
    expect(cursor.recognises(node(["/usr/bin/node", "/srv/agent/index.js"]))).toBe(false);
    expect(cursor.recognises({ ...PROCESS, comm: "agent", argv: ["agent"] })).toBe(false);
  });

  it("knows Antigravity's CLI as `agy`, and not the editor", () => {
    expect(agy.recognises({ ...PROCESS, comm: "agy", argv: ["/usr/local/bin/agy"] })).toBe(true);
    expect(agy.recognises({ ...PROCESS, comm: "antigravity", argv: ["/usr/share/antigravity/antigravity"] })).toBe(
      false,
    );
    expect(agy.recognises(PROCESS)).toBe(false);
    expect(cursor.recognises({ ...PROCESS, comm: "agy", argv: ["agy"] })).toBe(false);
  });

  it("are adoptable agent CLIs with no log reader, prompt reader or interrupt keys", () => {
    for (const module of [cursor, agy] as AgentModule[]) {
      expect(module.scope).toBe("tree");
      expect(module.adoptable).toBe(true);
      expect(module.history).toBeUndefined();
      expect(module.readPrompt).toBeUndefined();
      expect(module.interrupt).toBeUndefined();
    }
  });
});

describe("the status engine over a screen-only CLI", () => {
  let tmux: TestTmux | undefined;
  let dir: string;
  eachTempDir("sa-screen-only-", (d) => (dir = d));
  afterEach(async () => {
    await tmux?.close();
    tmux = undefined;
  });

  it("reads it at every look from the pane alone, and never asks the watch loop to poll fast", async () => {
    await symlink(STAND_IN, join(dir, "cursor-agent"));
    const t = createTestTmux({ ...process.env, STANDIN_PRINT_MS: "60000" });
    tmux = t;
    await t.run("new-session", "-d", "-s", "s", "-x", "80", "-y", "24", "-c", dir, join(dir, "cursor-agent"));
    const engine = new StatusEngine({ tmux: t.client, agents: new AgentRegistry([new CursorModule()]), nodeEnv: {} });
    const look = async () => {
      const seen = await engine.inspect(activePanes(await listPanes(t.client)), new Map());
      const observation = seen.get("s");
      if (!observation) throw new Error("no observation of session s");
      return observation;
    };
    const first = await waitFor(async () => {
      const o = await look();
      return o.cli === Cli.CURSOR && o;
    }, "the stand-in recognised as Cursor agent");
    expect(first.reason).toBe(StatusReason.NO_TURN);
    expect(engine.needsFastPoll).toBe(false);

    // Printing for a minute once a line is typed, past the start-up time: working, still no fast poll.
    await new Promise((r) => setTimeout(r, SCREEN_STARTUP_MS + 1_000));
    await t.run("send-keys", "-t", "=s:", "-l", "go");
    await t.run("send-keys", "-t", "=s:", "Enter");
    const working = await waitFor(async () => {
      const o = await look();
      return o.status === SessionStatus.WORKING && o;
    }, "working while it prints");
    expect(working.reason).toBe(StatusReason.ACTIVE_TURN);
    expect(engine.needsFastPoll).toBe(false);
  });
});
