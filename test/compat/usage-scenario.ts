import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Session, SessionStatus, StatusReason } from "../../gen/staragent/v1/session_pb.js";
import { type ServerProcess, startServerProcess } from "../support/servers.js";
import { createTestTmux, type TestTmux } from "../support/tmux.js";
import { waitFor } from "../support/wait.js";
import type { CliDriver, PreparedCli } from "./cli-driver.js";
import { connectHubSessions, type HubSessions } from "./hub-session-client.js";
import { requireInstalledCli } from "./installed-clis.js";
import { type MockModelServer, startMockModelServer } from "./mock-model-server.js";
import type { ScriptedError, ScriptedUsage } from "./model-reply.js";
import { describePane, paneInfo, typePrompt, waitForScreen } from "./pane-screen.js";
import { isRunning, processTree } from "./process-tree.js";
import { within } from "./within.js";

/** The Hub's user token for these runs. */
const TOKEN = "compat-usage-token-0123456789";
/** The CLIs take 3 to 16 s to draw their input box; a loaded 2-core machine more. */
const CLI_READY_TIMEOUT_MS = 90_000;
/** How long StarAgent may take to report a change (status or usage). */
const STATUS_TIMEOUT_MS = 20_000;
/** How long a CLI may take to send its model request after a prompt. */
const MODEL_REQUEST_TIMEOUT_MS = 45_000;
/** How long a typed prompt may take to show in the CLI's input box. */
const ECHO_TIMEOUT_MS = 10_000;
/** Per step. */
const STEP_TIMEOUT_MS = 180_000;
/** Setup and teardown start and stop a Hub, tmux and a CLI. */
const HOOK_TIMEOUT_MS = 60_000;
/** How long the CLI's processes may take to exit once their tmux server is gone. */
const EXIT_TIMEOUT_MS = 10_000;
/** The window the CLI runs in. */
const WINDOW_COLS = "120";
const WINDOW_ROWS = "50";
/**
 * The tokens the mock reports for the two turns: different in every field, with a cached part, so a
 * sum, a newest value and a swapped field each give a different number.
 */
export const TURN_USAGE: readonly ScriptedUsage[] = [
  { input: 1_234, cached: 200, output: 56 },
  { input: 2_345, cached: 1_100, output: 78 },
];

/** The tokens a native log says the conversation used. */
export interface NativeTotals {
  readonly input: number;
  readonly cached: number;
  readonly output: number;
  /** The newest request's prompt (what the next turn starts from). */
  readonly context: number;
}

/**
 * Set (to anything) to record the CLI's native state at each step as usage fixtures
 * (services/node/agents/<cli>/fixtures/usage/<version>/<step>.jsonl, see their README).
 */
const RECORD_VARIABLE = "STARAGENT_RECORD_USAGE_FIXTURES";

/** What a CLI's usage compat checks need beyond its driver. */
export interface UsageScenarioOptions {
  /** The conversation's totals as the CLI's own log (or database) records them. */
  readonly nativeTotals: (prepared: PreparedCli) => Promise<NativeTotals>;
  /** Writes the CLI's native state as it is now to `path` (a JSONL log, or opencode's rows dump). */
  readonly record: (prepared: PreparedCli, path: string) => Promise<void>;
  /** The folder the recorded fixtures go to. */
  readonly fixtures: string;
  /** A turn answered with these headers must show the windows in `rate_limits` (CLIs that read them). */
  readonly rateLimits?: {
    readonly headers: Readonly<Record<string, string>>;
    readonly expected: readonly { name: string; usedPercent: number; resetsAtMs: number; windowMinutes: number }[];
  };
  /**
   * A request refused with `error`: `limitReached` says whether StarAgent must report the plan's limit
   * (the CLI printed it as such) or must not (the CLI printed an API error).
   */
  readonly refusal?: {
    readonly title: string;
    readonly error: ScriptedError;
    /** The screen's words once the CLI printed the refusal. */
    readonly screen: (text: string) => boolean;
    readonly limitReached: boolean;
    /** When the hit limit resets, as StarAgent must report it (ms since the epoch), where the CLI records it. */
    readonly resetsAtMs?: number;
    /** The reset as the CLI printed it, as StarAgent must report it. */
    readonly resetsText?: string;
    /** The fixture the native state is recorded as after it. */
    readonly fixture: string;
  };
  /** The CLI's compaction command and the screen once it finished. */
  readonly compact?: { readonly command: string; readonly done: (text: string) => boolean };
}

/**
 * The usage checks of one real CLI in a real Hub's tmux against the mock model: two turns whose
 * replies report TURN_USAGE, after which Session.usage must equal what the mock sent and what the
 * CLI's native log says; then, where the CLI has them, a reply carrying rate-limit windows, a request
 * refused (the plan's limit hit) and a compaction.
 */
export function defineUsageScenario(driver: CliDriver, options: UsageScenarioOptions): void {
  describe(`${driver.label}: usage`, () => {
    /** The instance driven (set by startInstance). */
    let sessionId = `${driver.sessionPrefix}-usage`;
    let name = `nodes/local/sessions/${sessionId}`;
    let target = `=${sessionId}:`;
    const targets: string[] = [];
    let tmux: TestTmux | undefined;
    let hubProcess: ServerProcess | undefined;
    let mock: MockModelServer | undefined;
    let prepared: PreparedCli | undefined;
    let hub: HubSessions;
    let promptCount = 0;
    /** Records the native state as fixture `step` when RECORD_VARIABLE is set. */
    const record = async (step: string) => {
      if (!process.env[RECORD_VARIABLE]) return;
      await mkdir(options.fixtures, { recursive: true });
      await options.record(need(prepared), join(options.fixtures, `${step}.jsonl`));
    };

    /** Polls GetSession until `accept` holds; on timeout says what was seen and shows the pane. */
    const expectSession = async (what: string, accept: (s: Session) => boolean): Promise<Session> => {
      let last: Session | undefined;
      try {
        return await waitFor(
          async () => {
            last = (await hub.getSession({ name })).session;
            return last && accept(last) ? last : undefined;
          },
          `${driver.label}: ${what}`,
          STATUS_TIMEOUT_MS,
          200,
        );
      } catch (err) {
        const seen = last
          ? `${SessionStatus[last.status]}/${StatusReason[last.statusReason]} detail=${JSON.stringify(last.statusDetail)} usage=${JSON.stringify(last.usage, (_k, v) => (typeof v === "bigint" ? Number(v) : v))}`
          : "no session";
        throw new Error(`${(err as Error).message}\nlast: ${seen}\n${await describePane(need(tmux), target)}`);
      }
    };

    /** One prompt the model answers at once with `reply`'s usage and headers; waits for its completion. */
    const turn = async (usage: ScriptedUsage, headers?: Readonly<Record<string, string>>, recordRunning?: string) => {
      const server = need(mock);
      server.discardQueued();
      const reply = server.enqueue({ text: `Usage compat reply ${promptCount + 1}.`, usage, headers, hold: true });
      const before = (await hub.getSession({ name })).session?.completionId ?? "";
      await typePrompt(need(tmux), target, `please answer briefly u${++promptCount}`, ECHO_TIMEOUT_MS);
      await within(reply.requested, MODEL_REQUEST_TIMEOUT_MS, `${driver.label} to ask the model`);
      await expectSession("turn running", (s) => s.status === SessionStatus.WORKING);
      if (recordRunning) await record(recordRunning);
      reply.release();
      const done = await expectSession(
        "turn done",
        (s) => s.statusReason === StatusReason.UNSEEN_COMPLETION && s.completionId !== "" && s.completionId !== before,
      );
      await hub.markSessionSeen({ name, completionId: done.completionId });
      expect(server.unexpected).toEqual([]);
    };

    beforeAll(async () => {
      requireInstalledCli(driver.bin, driver.version);
      mock = await startMockModelServer({ model: driver.model, sideReply: (r) => driver.sideReply(r) });
      tmux = createTestTmux();
      hubProcess = await startServerProcess({ kind: "hub", tmuxSocket: tmux.socketName, token: TOKEN });
      hub = connectHubSessions(hubProcess.url, TOKEN);
      prepared = await driver.prepare(mock.baseUrl);
    }, HOOK_TIMEOUT_MS);

    afterAll(async () => {
      const failures: unknown[] = [];
      const step = async (fn: () => Promise<void>) => {
        try {
          await fn();
        } catch (err) {
          failures.push(err);
        }
      };
      const panePids: number[] = [];
      await step(async () => {
        const background = prepared?.backgroundPids() ?? [];
        const t = tmux;
        if (!t) return;
        for (const each of targets) {
          const pane = await paneInfo(t, each).catch(() => undefined);
          if (pane) panePids.push(...(await processTree(pane.pid)).filter((p) => !background.includes(p)));
        }
      });
      await step(async () => hubProcess?.stop());
      await step(async () => tmux?.close());
      await step(async () => {
        const exited = await waitFor(
          () => panePids.every((pid) => !isRunning(pid)),
          "the panes' processes to exit",
          EXIT_TIMEOUT_MS,
        ).catch(() => false);
        if (exited === false) for (const pid of panePids.filter(isRunning)) process.kill(pid, "SIGKILL");
      });
      await step(async () => prepared?.cleanup());
      await step(async () => mock?.close());
      if (failures.length > 0) throw new AggregateError(failures, `${driver.label}: cleanup failed`);
    }, HOOK_TIMEOUT_MS);

    /** Starts the CLI with `command` as session `id`, drives it from now on, and waits until it takes input. */
    const startInstance = async (id: string, command: readonly string[]) => {
      sessionId = id;
      name = `nodes/local/sessions/${id}`;
      target = `=${id}:`;
      await hub.createSession({ parent: "nodes/local", sessionId: id, cwd: need(prepared).cwd, command: [...command] });
      targets.push(target);
      await need(tmux).run("resize-window", "-t", target, "-x", WINDOW_COLS, "-y", WINDOW_ROWS);
      await waitForScreen(
        need(tmux),
        target,
        (s) => driver.isReady(s),
        `${driver.label} to take input`,
        CLI_READY_TIMEOUT_MS,
      );
    };
    /** Session.usage's totals and context as numbers. */
    const reported = (s: Session): NativeTotals => ({
      input: Number(s.usage?.totalInputTokens ?? -1),
      cached: Number(s.usage?.totalCachedTokens ?? -1),
      output: Number(s.usage?.totalOutputTokens ?? -1),
      context: Number(s.usage?.contextTokens ?? -1),
    });
    /** Waits until Session.usage says what the native log says and `also` holds; returns both. */
    const expectAsLogged = async (what: string, also: (n: NativeTotals) => boolean) => {
      let native: NativeTotals | undefined;
      let last: Session | undefined;
      await waitFor(
        async () => {
          native = await options.nativeTotals(need(prepared));
          last = (await hub.getSession({ name })).session;
          const same = last !== undefined && JSON.stringify(reported(last)) === JSON.stringify(native);
          return same && also(native);
        },
        `${driver.label}: ${what}`,
        STATUS_TIMEOUT_MS,
        200,
      ).catch(async (err: Error) => {
        const seen = last ? JSON.stringify(reported(last)) : "no session";
        throw new Error(
          `${err.message}\nreported ${seen}, the native log says ${JSON.stringify(native)}\n${await describePane(need(tmux), target)}`,
        );
      });
      return need(native);
    };

    it("starts idle, with no usage before the first reply", { timeout: STEP_TIMEOUT_MS }, async () => {
      await startInstance(sessionId, need(prepared).command);
      const session = await expectSession("fresh: idle, no turn", (s) => s.statusReason === StatusReason.NO_TURN);
      expect(session.usage).toBeUndefined();
    });

    it("after two turns, the tokens reported equal what the mock returned and what the native log says", {
      timeout: STEP_TIMEOUT_MS,
    }, async () => {
      const [first, second] = TURN_USAGE as [ScriptedUsage, ScriptedUsage];
      await turn(first);
      await turn(second, undefined, "turn-in-progress");
      const sent = {
        input: first.input + second.input,
        cached: first.cached + second.cached,
        output: first.output + second.output,
        context: second.input,
      };
      const session = await expectSession(
        "usage of both turns",
        (s) => JSON.stringify(reported(s)) === JSON.stringify(sent),
      );
      expect(reported(session)).toEqual(sent);
      expect(await options.nativeTotals(need(prepared))).toEqual(sent);
      expect(session.usage?.model).toBe(driver.model);
      expect(Number(session.usage?.lastTurnTokens)).toBe(second.input + second.output);
      expect(session.usage?.totalsPending).toBe(false);
      expect(session.usage?.limitReached).toBe(false);
      await record("two-turns");
    });

    const rateLimits = options.rateLimits;
    if (rateLimits) {
      it("a reply with the plan's rate-limit windows shows them in rate_limits", {
        timeout: STEP_TIMEOUT_MS,
      }, async () => {
        await turn({ input: 3_000, cached: 0, output: 9 }, rateLimits.headers);
        const windows = (s: Session) =>
          (s.usage?.rateLimits ?? []).map((r) => ({
            name: r.name,
            usedPercent: r.usedPercent,
            resetsAtMs: r.resetsTime ? timestampMs(r.resetsTime) : 0,
            windowMinutes: Number(r.windowMinutes),
          }));
        const session = await expectSession("rate limits", (s) => windows(s).length > 0);
        expect(windows(session)).toEqual(rateLimits.expected);
        await record("rate-limits");
      });
    }

    const refusal = options.refusal;
    if (refusal) {
      it(refusal.title, { timeout: STEP_TIMEOUT_MS }, async () => {
        const server = need(mock);
        server.discardQueued();
        // The CLI may retry once or twice: every attempt is refused.
        const refusals = [1, 2, 3].map(() => server.enqueue({ error: refusal.error }));
        await typePrompt(need(tmux), target, `please answer briefly u${++promptCount}`, ECHO_TIMEOUT_MS);
        await within(
          refusals[0]?.requested ?? Promise.reject(new Error("nothing queued")),
          MODEL_REQUEST_TIMEOUT_MS,
          `${driver.label} to ask the model`,
        );
        await waitForScreen(
          need(tmux),
          target,
          refusal.screen,
          `${driver.label} to print the refusal`,
          STATUS_TIMEOUT_MS,
        );
        if (refusal.limitReached) {
          const session = await expectSession("limit reached", (s) => s.usage?.limitReached === true);
          expect(session.statusDetail).toMatch(/^usage limit reached/);
          expect(session.status).not.toBe(SessionStatus.WORKING);
          const resets = session.usage?.limitResetsTime;
          if (refusal.resetsAtMs !== undefined) expect(resets ? timestampMs(resets) : 0).toBe(refusal.resetsAtMs);
          if (refusal.resetsText !== undefined) expect(session.usage?.limitResetsText).toBe(refusal.resetsText);
        } else {
          const session = await expectSession("the refused turn over", (s) => s.status !== SessionStatus.WORKING);
          expect(session.usage?.limitReached).toBe(false);
          expect(session.statusDetail).not.toMatch(/usage limit reached/);
        }
        server.discardQueued();
        await record(refusal.fixture);
      });
    }

    const compact = options.compact;
    if (compact) {
      it("after a compaction the context drops to the newest request's; the totals are still the log's", {
        timeout: STEP_TIMEOUT_MS,
      }, async () => {
        const server = need(mock);
        server.discardQueued();
        const before = await options.nativeTotals(need(prepared));
        const asked = server.requests.length;
        // The summary requests (Claude Code sends more than one) take these where the CLI sends them
        // as a turn's requests; the next turn drops what is left.
        for (let i = 0; i < 3; i++)
          server.enqueue({
            text: "Summary of the usage compat conversation.",
            usage: { input: 4_000, cached: 0, output: 300 },
          });
        await typePrompt(need(tmux), target, compact.command, ECHO_TIMEOUT_MS);
        await waitFor(
          () => server.requests.length > asked || undefined,
          "the compaction request",
          MODEL_REQUEST_TIMEOUT_MS,
        );
        await waitForScreen(
          need(tmux),
          target,
          compact.done,
          `${driver.label} to finish compacting`,
          MODEL_REQUEST_TIMEOUT_MS,
        );
        await turn({ input: 500, cached: 0, output: 20 });
        const after = await expectAsLogged("compacted", (n) => n.context === 500);
        expect(after.input).toBeGreaterThan(before.input);
        expect(after.output).toBeGreaterThan(before.output);
        await record("compacted");
      });
    }
  });
}

function need<T>(value: T | undefined): T {
  if (value === undefined) throw new Error("setup did not complete (see the beforeAll error)");
  return value;
}
