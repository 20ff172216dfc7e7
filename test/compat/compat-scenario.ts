import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ChatMessage,
  ChatRole,
  PromptKind,
  type Session,
  SessionStatus,
  StatusReason,
} from "../../gen/staragent/v1/session_pb.js";
import { type ServerProcess, startServerProcess } from "../support/servers.js";
import { createTestTmux, type TestTmux } from "../support/tmux.js";
import { waitFor } from "../support/wait.js";
import type { CliDriver, PreparedCli } from "./cli-driver.js";
import { foreignConnections } from "./foreign-connections.js";
import { connectHubSessions, type HubSessions, waitForSession } from "./hub-session-client.js";
import { requireInstalledClis } from "./installed-clis.js";
import { type MockModelServer, startMockModelServer } from "./mock-model-server.js";
import { describePane, paneInfo, typePrompt, waitForScreen } from "./pane-screen.js";
import { isRunning, processTree } from "./process-tree.js";
import { within } from "./within.js";

/** The Hub's user token for these runs. */
const TOKEN = "compat-token-0123456789";
/** Codex and opencode take 5 to 16 s to draw their input box; a loaded 2-core CI machine more. */
const CLI_READY_TIMEOUT_MS = 60_000;
/** How long StarAgent may take to report a change of state (its goal is well under a second). */
const STATUS_TIMEOUT_MS = 15_000;
/** How long a CLI may take to send its model request after a prompt or an approval. */
const MODEL_REQUEST_TIMEOUT_MS = 30_000;
/** How long a typed prompt may take to show in the CLI's input box. */
const ECHO_TIMEOUT_MS = 10_000;
/** Per step: the waits above plus margin. */
const STEP_TIMEOUT_MS = 120_000;
/** Setup and teardown start and stop a Hub, tmux and a CLI daemon. */
const HOOK_TIMEOUT_MS = 60_000;
/**
 * The window the CLIs run in, as a dashboard viewer's terminal would size it. Both TUIs draw on the
 * alternate screen and keep no scrollback, so chat sees only what fits: at tmux's default 80x24 the
 * first prompt of this scenario has scrolled out of view by the end.
 */
const WINDOW_COLS = "120";
const WINDOW_ROWS = "50";
/** How long the CLI's processes may take to exit once their tmux server is gone. */
const EXIT_TIMEOUT_MS = 10_000;

/** The first prompt: its turn asks for approval, runs the command, then answers. */
const PROMPT_WITH_TOOL = "please write the compat marker file";
/** The second prompt: its turn is interrupted. */
const PROMPT_INTERRUPTED = "start a long compat task";
/** The command the model asks to run; its output file proves the approval went through. */
const MARKER_FILE = "compat-approved.txt";
const MARKER_TEXT = "compat-approved";
/** The mock model's answer once the command ran. */
const REPLY_DONE = "The marker file is written and the compat turn is done.";
/** Never streamed: the turn is interrupted first. */
const REPLY_NEVER = "This reply is never sent because the turn is interrupted.";

/** What a scenario learned, for the extra checks of one CLI. */
export interface ScenarioFacts {
  /** The completion id StarAgent reported for the finished turn. */
  completionId: string;
  /** The CLI's prepared HOME and working folder. */
  prepared: PreparedCli | undefined;
}

/**
 * The compat scenario for one real CLI in a real Hub's tmux: fresh → a turn running → an approval
 * asked → approved → turn done → seen → a turn interrupted, then chat. Every step is read through the
 * Hub's gRPC API. `extraSteps` adds checks of that CLI's own state; they run before the teardown.
 */
export function defineCompatScenario(driver: CliDriver, extraSteps?: (facts: ScenarioFacts) => void): void {
  describe(driver.label, () => {
    const name = `nodes/local/sessions/${driver.sessionId}`;
    const target = `=${driver.sessionId}:`;
    const facts: ScenarioFacts = { completionId: "", prepared: undefined };
    let tmux: TestTmux | undefined;
    let hubProcess: ServerProcess | undefined;
    let mock: MockModelServer | undefined;
    let hub: HubSessions;

    const pane = () => describePane(requireValue(tmux), target);
    const expectState = (status: SessionStatus, reason: StatusReason, what: string, extra?: (s: Session) => boolean) =>
      waitForSession(
        hub,
        name,
        (s) => s.status === status && s.statusReason === reason && (extra === undefined || extra(s)),
        `${driver.label}: ${what} (status ${SessionStatus[status]}, reason ${StatusReason[reason]})`,
        STATUS_TIMEOUT_MS,
        pane,
      );
    const cliPids = async () => {
      const { pid } = await paneInfo(requireValue(tmux), target);
      return [...processTree(pid), ...requireValue(facts.prepared).backgroundPids()];
    };

    beforeAll(async () => {
      requireInstalledClis();
      mock = await startMockModelServer({ model: driver.model, sideReply: (r) => driver.sideReply(r) });
      tmux = createTestTmux();
      hubProcess = await startServerProcess({ kind: "hub", tmuxSocket: tmux.socketName, token: TOKEN });
      hub = connectHubSessions(hubProcess.url, TOKEN);
      facts.prepared = await driver.prepare(mock.baseUrl);
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
      // The pane's own processes; Codex's daemon starts below the pane too but is stopped its own way.
      let panePids: number[] = [];
      await step(async () => {
        const background = facts.prepared?.backgroundPids() ?? [];
        const tree =
          tmux === undefined
            ? []
            : await paneInfo(tmux, target).then(
                (p) => processTree(p.pid),
                () => [],
              );
        panePids = tree.filter((pid) => !background.includes(pid));
      });
      await step(async () => hubProcess?.stop());
      await step(async () => tmux?.close());
      await step(async () => {
        // The CLI gets SIGHUP with its tmux server; anything of the pane still running is killed by pid.
        const exited = await waitFor(
          () => panePids.every((pid) => !isRunning(pid)),
          "the pane's processes to exit",
          EXIT_TIMEOUT_MS,
        ).catch(() => false);
        if (exited === false) {
          for (const pid of panePids.filter(isRunning)) process.kill(pid, "SIGKILL");
        }
      });
      await step(async () => facts.prepared?.cleanup());
      await step(async () => mock?.close());
      if (failures.length > 0) throw new AggregateError(failures, `${driver.label}: cleanup failed`);
    }, HOOK_TIMEOUT_MS);

    it("starts idle, with no turn", { timeout: STEP_TIMEOUT_MS }, async () => {
      const prepared = requireValue(facts.prepared);
      await hub.createSession({
        parent: "nodes/local",
        sessionId: driver.sessionId,
        cwd: prepared.cwd,
        command: [...prepared.command],
      });
      await requireValue(tmux).run("resize-window", "-t", target, "-x", WINDOW_COLS, "-y", WINDOW_ROWS);
      await waitForScreen(
        requireValue(tmux),
        target,
        (s) => driver.isReady(s),
        `${driver.label} to take input`,
        CLI_READY_TIMEOUT_MS,
      );
      const session = await expectState(SessionStatus.IDLE, StatusReason.NO_TURN, "fresh CLI");
      expect(session.cli).toBe(driver.cli);
      expect(session.completionId).toBe("");
    });

    let toolTurn: ReturnType<MockModelServer["enqueue"]>;
    let answerTurn: ReturnType<MockModelServer["enqueue"]>;

    it("reports working while a turn runs", { timeout: STEP_TIMEOUT_MS }, async () => {
      const server = requireValue(mock);
      toolTurn = server.enqueue({
        toolCall: driver.approvalToolCall(`echo ${MARKER_TEXT} > ${MARKER_FILE}`),
        hold: true,
      });
      answerTurn = server.enqueue({ text: REPLY_DONE, hold: true });
      await typePrompt(requireValue(tmux), target, PROMPT_WITH_TOOL, ECHO_TIMEOUT_MS);
      const request = await within(toolTurn.requested, MODEL_REQUEST_TIMEOUT_MS, `${driver.label} to ask the model`);
      expect(JSON.stringify(request.body)).toContain(PROMPT_WITH_TOOL);
      await expectState(SessionStatus.WORKING, StatusReason.ACTIVE_TURN, "model request open");
      expect(foreignConnections(await cliPids())).toEqual([]);
    });

    it("reports review with the approval prompt when a tool needs approval", { timeout: STEP_TIMEOUT_MS }, async () => {
      toolTurn.release();
      const session = await expectState(SessionStatus.REVIEW, StatusReason.INPUT_PROMPT, "approval asked");
      expect(session.prompt).toContain(driver.approvalQuestion);
      expect(session.promptKind).toBe(PromptKind.APPROVAL);
    });

    it("reports working again once the tool is approved", { timeout: STEP_TIMEOUT_MS }, async () => {
      await driver.approve(requireValue(tmux), target);
      const request = await within(
        answerTurn.requested,
        MODEL_REQUEST_TIMEOUT_MS,
        `${driver.label} to send the tool result to the model`,
      );
      expect(driver.isToolResult(request)).toBe(true);
      await expectState(SessionStatus.WORKING, StatusReason.ACTIVE_TURN, "approved, model request open");
      expect(await readFile(join(requireValue(facts.prepared).cwd, MARKER_FILE), "utf8")).toBe(`${MARKER_TEXT}\n`);
    });

    it("reports the finished turn as an unseen completion", { timeout: STEP_TIMEOUT_MS }, async () => {
      answerTurn.release();
      expect(await within(answerTurn.ended, MODEL_REQUEST_TIMEOUT_MS, "the answer to stream")).toBe("completed");
      const session = await expectState(
        SessionStatus.REVIEW,
        StatusReason.UNSEEN_COMPLETION,
        "turn done",
        (s) => s.completionId !== "",
      );
      facts.completionId = session.completionId;
      const again = await hub.getSession({ name });
      expect(again.session?.completionId).toBe(facts.completionId);
      expect(again.session?.status).toBe(SessionStatus.REVIEW);
    });

    it("goes idle once the completion is marked seen", { timeout: STEP_TIMEOUT_MS }, async () => {
      const marked = await hub.markSessionSeen({ name, completionId: facts.completionId });
      expect(marked.session?.status).toBe(SessionStatus.IDLE);
      expect(marked.session?.statusReason).toBe(StatusReason.SEEN_COMPLETION);
      const session = await expectState(SessionStatus.IDLE, StatusReason.SEEN_COMPLETION, "completion seen");
      expect(session.completionId).toBe(facts.completionId);
    });

    it("goes idle as interrupted when a running turn gets Escape", { timeout: STEP_TIMEOUT_MS }, async () => {
      const never = requireValue(mock).enqueue({ text: REPLY_NEVER, hold: true });
      await typePrompt(requireValue(tmux), target, PROMPT_INTERRUPTED, ECHO_TIMEOUT_MS);
      await within(never.requested, MODEL_REQUEST_TIMEOUT_MS, `${driver.label} to ask the model`);
      await expectState(SessionStatus.WORKING, StatusReason.ACTIVE_TURN, "second turn running");
      await driver.interrupt(requireValue(tmux), target);
      expect(await within(never.ended, MODEL_REQUEST_TIMEOUT_MS, "the CLI to drop the model request")).toBe("aborted");
      await expectState(SessionStatus.IDLE, StatusReason.INTERRUPTED, "turn interrupted");
    });

    it("shows the typed prompts and the model's replies in chat", { timeout: STEP_TIMEOUT_MS }, async () => {
      const texts = (messages: readonly ChatMessage[], role: ChatRole) =>
        messages.filter((m) => m.role === role).map((m) => m.text.trim());
      let last: readonly ChatMessage[] = [];
      const messages = await waitFor(
        async () => {
          last = (await hub.getChat({ name })).messages;
          const users = texts(last, ChatRole.USER);
          return users.includes(PROMPT_WITH_TOOL) && users.includes(PROMPT_INTERRUPTED) ? last : undefined;
        },
        "both typed prompts as user messages in GetChat",
        STATUS_TIMEOUT_MS,
      ).catch(async (err: Error) => {
        throw new Error(`${err.message}
last GetChat: ${describeChat(last)}
${await pane()}`);
      });
      const seen = `GetChat: ${describeChat(messages)}`;
      // Exactly what was typed and what the model said: screens drawn by the TUI are not messages.
      expect(texts(messages, ChatRole.USER), seen).toEqual([PROMPT_WITH_TOOL, PROMPT_INTERRUPTED]);
      expect(texts(messages, ChatRole.ASSISTANT), seen).toEqual([REPLY_DONE]);
      expect(requireValue(mock).unexpected).toEqual([]);
      expect(foreignConnections(await cliPids())).toEqual([]);
    });

    extraSteps?.(facts);
  });
}

function describeChat(messages: readonly ChatMessage[]): string {
  return JSON.stringify(messages.map((m) => ({ role: ChatRole[m.role], text: m.text, tool: m.toolName })));
}

function requireValue<T>(value: T | undefined): T {
  if (value === undefined) throw new Error("setup did not complete (see the beforeAll error)");
  return value;
}
