import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ChatMessage,
  ChatRole,
  PromptEffect,
  PromptKind,
  type Session,
  SessionStatus,
  StatusReason,
} from "../../gen/staragent/v1/session_pb.js";
import { type ServerProcess, startServerProcess } from "../support/servers.js";
import { createTestTmux, type TestTmux } from "../support/tmux.js";
import { waitFor } from "../support/wait.js";
import type { CliDriver, CliInstance, PreparedCli, StepContext } from "./cli-driver.js";
import { foreignConnections } from "./foreign-connections.js";
import { connectHubSessions, type HubSessions, promptReadTwice } from "./hub-session-client.js";
import { requireInstalledCli } from "./installed-clis.js";
import { type MockModelServer, startMockModelServer } from "./mock-model-server.js";
import { describePane, paneInfo, typePrompt, waitForScreen } from "./pane-screen.js";
import { isRunning, processTree } from "./process-tree.js";
import { recordScreen } from "./prompt-recording.js";
import { within } from "./within.js";

/** The Hub's user token for these runs. */
const TOKEN = "compat-token-0123456789";
/** The CLIs take 3 to 16 s to draw their input box; a loaded 2-core CI machine more. */
const CLI_READY_TIMEOUT_MS = 90_000;
/** How long StarAgent may take to report a change of state (its goal is well under a second). */
const STATUS_TIMEOUT_MS = 15_000;
/** How long a CLI may take to send its model request after a prompt or an approval. */
const MODEL_REQUEST_TIMEOUT_MS = 45_000;
/** How long a typed prompt may take to show in the CLI's input box. */
const ECHO_TIMEOUT_MS = 10_000;
/** Per step: the waits above plus margin. */
const STEP_TIMEOUT_MS = 150_000;
/** Setup and teardown start and stop a Hub, tmux and a CLI daemon. */
const HOOK_TIMEOUT_MS = 60_000;
/** Largest ListSessions page asked for: every instance fits. */
const PAGE_SIZE = 100;
/**
 * The window the CLIs run in, as a dashboard viewer's terminal would size it. The TUIs draw on the
 * alternate screen and keep no scrollback, so chat sees only what fits: at tmux's default 80x24 the
 * first prompt of this scenario has scrolled out of view by the chat step.
 */
const WINDOW_COLS = "120";
const WINDOW_ROWS = "50";
/**
 * The window of the chat-history steps: tmux's default size, where the TUIs' screens hold about one
 * turn, so the first of three turns has scrolled away and only the native log still has it.
 */
const SMALL_COLS = "80";
const SMALL_ROWS = "24";
/** The chat-history steps run three turns per instance (six in the two-instance one): more time. */
const HISTORY_STEP_TIMEOUT_MS = 2 * STEP_TIMEOUT_MS;
/** Turns each instance runs in the chat-history steps. */
const HISTORY_TURNS = 3;
/** Messages per GetChat page in the chat-history steps (small, so the history is read page by page). */
const HISTORY_PAGE_SIZE = 4;
/** The mock's answer in the chat-history steps: several paragraphs, taller than the small window. */
const historyReply = (tag: string) =>
  Array.from({ length: 8 }, (_, i) => `History reply ${tag}, paragraph ${i + 1}.`).join("\n\n");
/** How long the CLI's processes may take to exit once their tmux server is gone. */
const EXIT_TIMEOUT_MS = 10_000;

/** The command the model asks to run; its output file proves the approval went through. */
const MARKER_TEXT = "compat-approved";
/**
 * A command that runs until interrupted (it writes, so every CLI asks before running it; not `sleep`,
 * which Claude Code 2.1.332 refuses to run in the foreground).
 */
const SLOW_COMMAND = "tail -f /dev/null > compat-waiting.txt";
/** The mock model's answer once the command ran. */
const REPLY_DONE = "The marker file is written and the compat turn is done.";
/** Streamed only partly (mid-reply interrupt) or never (interrupted first); its first word is unique on screen. */
const REPLY_LONG = "Compat-long-answer begins here and is interrupted before it ends.";
/** The first word of REPLY_LONG: what the mock streams before it holds a reply mid-text. */
const REPLY_LONG_FIRST_WORD = "Compat-long-answer";
/** The mock's answer in the turn the resumed CLI runs. */
const REPLY_RESUMED = "The resumed conversation goes on.";
/** The mock's answer in the turn of the conversation resumed by its id (CreateSessionRequest.resume). */
const REPLY_RESUMED_BY_ID = "The conversation resumed by its id goes on.";
/** The mock's answer to the turn running while a prompt is queued. */
const REPLY_BEFORE_QUEUED = "This turn ends before the queued prompt is typed.";
/** The prompt queued with QueueChatMessage during a turn. */
const QUEUED_PROMPT = "compat queued prompt: answer once this turn is over";
/** The mock's answer to the queued prompt. */
const REPLY_QUEUED = "The queued prompt arrived after the turn.";

/** What a scenario learned, for the extra checks of one CLI. */
export interface ScenarioFacts {
  /** Completion ids StarAgent reported for finished turns, in order, per instance session id. */
  readonly completions: Map<string, string[]>;
  /**
   * Finished turns whose completion was never reported on its own, per instance session id: the turn a
   * queued prompt was typed after (it is typed the moment the turn ends).
   */
  readonly unobserved: Map<string, number>;
  /** The CLI's prepared HOME and working folder. */
  prepared: PreparedCli | undefined;
}

/**
 * The compat scenario for one real CLI in a real Hub's tmux. Instance A runs every step alone: fresh,
 * a turn running, an approval asked, approved, turn done, seen, chat, interrupted before the first
 * reply, mid-reply, at the approval dialog and during a tool call, then the CLI's own steps. Then
 * instance B starts in the same folder and runs the same steps while A is checked in the same
 * listing; A runs one more turn while B stays as it was; finally A's conversation is resumed in a new
 * session next to B. Every check reads the Hub's gRPC API. `extraSteps` adds checks of that CLI's
 * own state; they run before the teardown.
 */
/**
 * How long after its session stopped a conversation is resumed: past the slack around a process's
 * start (1 s), so its log is an earlier run's by its time too, as when resuming yesterday's.
 */
const RESUME_LATER_MS = 2_000;
const resumeLater = () => new Promise((r) => setTimeout(r, RESUME_LATER_MS));

/** Answers tried when AnswerPrompt says the prompt changed since it was read (see answerWith). */
const ANSWER_ATTEMPTS = 2;

export function defineCompatScenario(driver: CliDriver, extraSteps?: (facts: ScenarioFacts) => void): void {
  describe(driver.label, () => {
    const instance = (suffix: string): CliInstance => {
      const sessionId = `${driver.sessionPrefix}-${suffix}`;
      return { sessionId, name: `nodes/local/sessions/${sessionId}`, target: `=${sessionId}:` };
    };
    const a = instance("a");
    const b = instance("b");
    const resumed = instance("a-resumed");
    const byId = instance("a-by-id");
    const facts: ScenarioFacts = { completions: new Map(), unobserved: new Map(), prepared: undefined };
    /** The state each started instance must keep while another one is driven. */
    const holding = new Map<string, { what: string; accept: (s: Session) => boolean }>();
    const started: CliInstance[] = [];
    let tmux: TestTmux | undefined;
    let hubProcess: ServerProcess | undefined;
    let mock: MockModelServer | undefined;
    let hub: HubSessions;
    /** Prompts are numbered so each is unique: a pane is told from another by the prompts it shows. */
    let promptCount = 0;
    /** The prompt of the resumed instance's turn: the conversation resumed by id must show it. */
    let resumedPrompt = "";
    const nextPrompt = (what: string, inst: CliInstance) => `${what} ${inst.sessionId.slice(-1)}${++promptCount}`;

    const describeAll = async () => {
      const t = requireValue(tmux);
      const dumps = await Promise.all(started.map(async (i) => `[${i.sessionId}] ${await describePane(t, i.target)}`));
      return dumps.join("\n");
    };

    /** Polls ListSessions until `inst` matches and every other started instance keeps its state. */
    const expectIn = async (inst: CliInstance, what: string, accept: (s: Session) => boolean): Promise<Session> => {
      let last: Session[] = [];
      const others = [...holding.entries()].filter(([name]) => name !== inst.name);
      try {
        const found = await waitFor(
          async () => {
            last = (await hub.listSessions({ parent: "nodes/local", pageSize: PAGE_SIZE })).sessions;
            const mine = last.find((s) => s.name === inst.name);
            if (!mine || !accept(mine)) return undefined;
            const kept = others.every(([name, state]) => {
              const other = last.find((s) => s.name === name);
              return other !== undefined && state.accept(other);
            });
            return kept ? mine : undefined;
          },
          `${driver.label} ${inst.sessionId}: ${what}`,
          STATUS_TIMEOUT_MS,
          200,
        );
        holding.set(inst.name, { what, accept });
        return found;
      } catch (err) {
        const seen = last
          .map(
            (s) =>
              `${s.tmuxSession}: ${SessionStatus[s.status]}/${StatusReason[s.statusReason]} prompt=${JSON.stringify(s.prompt)} ` +
              `completion_id=${JSON.stringify(s.completionId)} detail=${JSON.stringify(s.statusDetail)}`,
          )
          .join("\n");
        const wanted = others.map(([name, state]) => `${name} must stay: ${state.what}`).join("\n");
        throw new Error(`${(err as Error).message}\n${wanted}\nlast ListSessions:\n${seen}\n${await describeAll()}`);
      }
    };
    /**
     * Waits for the model request a step expects; the timeout error shows every pane and the mock's
     * newest requests (a request that went elsewhere, or none at all).
     */
    const modelAsked = async <T>(pending: Promise<T>, what = `${driver.label} to ask the model`): Promise<T> => {
      try {
        return await within(pending, MODEL_REQUEST_TIMEOUT_MS, what);
      } catch (err) {
        const now = Date.now();
        const newest = requireValue(mock)
          .requests.slice(-3)
          .map((r) => `${r.method} ${r.path} ${((now - r.receivedAt) / 1000).toFixed(1)} s ago`);
        const got = newest.length > 0 ? newest.join("; ") : "none";
        throw new Error(`${(err as Error).message}
the mock's newest requests: ${got}; ${requireValue(mock).connectionNote()}
${await describeAll()}`);
      }
    };
    const state = (status: SessionStatus, reason: StatusReason, extra?: (s: Session) => boolean) => (s: Session) =>
      s.status === status && s.statusReason === reason && (extra === undefined || extra(s));
    const stepContext = (inst: CliInstance): StepContext => ({
      tmux: requireValue(tmux),
      hub,
      mock: requireValue(mock),
      instance: inst,
      cwd: requireValue(facts.prepared).cwd,
      type: (text) => typePrompt(requireValue(tmux), inst.target, text, ECHO_TIMEOUT_MS, driver.submitQuietMs),
      expect: (what, accept) => expectIn(inst, what, accept),
      recordCompletion: (completionId) => record(inst, completionId),
      markSeen: async (completionId) => {
        await hub.markSessionSeen({ name: inst.name, completionId }).catch(async (err: unknown) => {
          // Name the state the Hub refused from, so a failure here says which completion it held.
          const now = (await hub.listSessions({ parent: "nodes/local", pageSize: PAGE_SIZE })).sessions.find(
            (s) => s.name === inst.name,
          );
          const state = now
            ? `${SessionStatus[now.status]}/${StatusReason[now.statusReason]} completion_id=${JSON.stringify(now.completionId)} reply=${JSON.stringify(now.replyExcerpt)}`
            : "gone";
          throw new Error(`MarkSessionSeen(${completionId}): ${(err as Error).message}; the session now: ${state}`);
        });
        await expectIn(
          inst,
          "completion seen",
          state(SessionStatus.IDLE, StatusReason.SEEN_COMPLETION, (s) => s.completionId === completionId),
        );
      },
    });
    const cliPids = async () => {
      const t = requireValue(tmux);
      const trees = await Promise.all(
        started.map((i) =>
          paneInfo(t, i.target).then(
            (p) => processTree(p.pid),
            () => [] as number[],
          ),
        ),
      );
      return [...trees.flat(), ...requireValue(facts.prepared).backgroundPids()];
    };

    /** Starts an instance in the shared folder and waits until it takes input and is reported idle. */
    const start = async (inst: CliInstance, command: readonly string[], conversationId?: string) => {
      const prepared = requireValue(facts.prepared);
      await hub.createSession({
        parent: "nodes/local",
        sessionId: inst.sessionId,
        cwd: prepared.cwd,
        command: [...command],
        resume: conversationId === undefined ? undefined : { cli: driver.cli, conversationId },
      });
      started.push(inst);
      await requireValue(tmux).run("resize-window", "-t", inst.target, "-x", WINDOW_COLS, "-y", WINDOW_ROWS);
      await waitForScreen(
        requireValue(tmux),
        inst.target,
        (s) => driver.isReady(s),
        `${driver.label} ${inst.sessionId} to take input`,
        CLI_READY_TIMEOUT_MS,
      );
      const session = await expectIn(inst, "fresh CLI: idle, no turn", state(SessionStatus.IDLE, StatusReason.NO_TURN));
      expect(session.cli).toBe(driver.cli);
      expect(session.completionId).toBe("");
    };

    /**
     * The mock's queue for a step that starts a new prompt: replies an earlier step queued and no
     * request took (it failed half-way) must not answer this step's requests.
     */
    const queueFor = () => {
      const server = requireValue(mock);
      server.discardQueued();
      return server;
    };

    /**
     * One turn the model answers at once: working while held, then an unseen completion, then seen.
     * Returns the prompt typed.
     */
    const completedTurn = async (inst: CliInstance, text: string): Promise<string> => {
      const server = queueFor();
      const reply = server.enqueue({ text, hold: true });
      const prompt = nextPrompt("please answer briefly", inst);
      await typePrompt(requireValue(tmux), inst.target, prompt, ECHO_TIMEOUT_MS, driver.submitQuietMs);
      const request = await modelAsked(reply.requested);
      expect(JSON.stringify(request.body)).toContain(prompt);
      await expectIn(inst, "turn running", state(SessionStatus.WORKING, StatusReason.ACTIVE_TURN));
      reply.release();
      const done = await expectIn(
        inst,
        "turn done",
        state(SessionStatus.REVIEW, StatusReason.UNSEEN_COMPLETION, (s) => s.completionId !== ""),
      );
      record(inst, done.completionId);
      await stepContext(inst).markSeen(done.completionId);
      return prompt;
    };

    /** Every message of an instance's chat: the newest page, then older pages through `before`. */
    const wholeChat = async (inst: CliInstance): Promise<ChatMessage[]> => {
      const newest = await hub.getChat({ name: inst.name, pageSize: HISTORY_PAGE_SIZE });
      const pages: ChatMessage[][] = [newest.messages];
      let token = newest.hasMore ? newest.olderPageToken : "";
      while (token !== "") {
        const page = await hub.getChat({ name: inst.name, pageSize: HISTORY_PAGE_SIZE, before: token });
        pages.unshift(page.messages);
        token = page.hasMore ? page.olderPageToken : "";
      }
      return pages.flat();
    };

    /**
     * Waits until the instance's whole chat holds each of `turns` (prompt, reply) exactly once and in
     * order, and none of `foreign` (another instance's prompts and replies).
     */
    const expectChatTurns = async (
      inst: CliInstance,
      turns: readonly { prompt: string; reply: string }[],
      foreign: readonly string[],
    ) => {
      let last: ChatMessage[] = [];
      const inOrderOnce = (texts: readonly string[], wanted: readonly string[]) => {
        const at = wanted.map((w) => texts.indexOf(w));
        return (
          wanted.every((w) => texts.filter((t) => t === w).length === 1) &&
          at.every((i, k) => k === 0 || i > (at[k - 1] ?? 0))
        );
      };
      await waitFor(
        async () => {
          last = await wholeChat(inst);
          const users = last.filter((m) => m.role === ChatRole.USER).map((m) => m.text.trim());
          const replies = last.filter((m) => m.role === ChatRole.ASSISTANT).map((m) => m.text.trim());
          const ok =
            inOrderOnce(
              users,
              turns.map((t) => t.prompt),
            ) &&
            inOrderOnce(
              replies,
              turns.map((t) => t.reply),
            ) &&
            !last.some((m) => foreign.some((f) => m.text.includes(f)));
          return ok || undefined;
        },
        `${driver.label} ${inst.sessionId}: every prompt and reply once, in order, in the whole chat`,
        STATUS_TIMEOUT_MS,
      ).catch(async (err: Error) => {
        throw new Error(`${err.message}\nwhole chat: ${describeChat(last)}\n${await describeAll()}`);
      });
    };

    /** Runs a turn with a tall reply in `inst`; returns its prompt and reply. */
    const historyTurn = async (inst: CliInstance, tag: string) => {
      const reply = historyReply(tag);
      const prompt = await completedTurn(inst, reply);
      return { prompt, reply };
    };
    const resize = (inst: CliInstance, cols: string, rows: string) =>
      requireValue(tmux).run("resize-window", "-t", inst.target, "-x", cols, "-y", rows);
    const record = (inst: CliInstance, completionId: string) => {
      const list = facts.completions.get(inst.sessionId) ?? [];
      expect(list).not.toContain(completionId);
      facts.completions.set(inst.sessionId, [...list, completionId]);
    };

    /** Sends a prompt whose turn the user interrupts while the model holds its reply. */
    const interruptedTurn = async (inst: CliInstance, hold: true | "mid-text") => {
      const server = queueFor();
      const t = requireValue(tmux);
      const never = server.enqueue({ text: REPLY_LONG, hold });
      await typePrompt(
        t,
        inst.target,
        nextPrompt("start a long compat task", inst),
        ECHO_TIMEOUT_MS,
        driver.submitQuietMs,
      );
      await modelAsked(never.requested);
      if (hold === "mid-text") {
        await waitForScreen(
          t,
          inst.target,
          (s) => (driver.replyStarted ?? ((screen) => screen.includes(REPLY_LONG_FIRST_WORD)))(s),
          "the reply to start on screen",
          ECHO_TIMEOUT_MS,
        );
      }
      await expectIn(inst, "turn running", state(SessionStatus.WORKING, StatusReason.ACTIVE_TURN));
      await driver.interrupt(t, inst.target);
      expect(await within(never.ended, MODEL_REQUEST_TIMEOUT_MS, "the CLI to drop the model request")).toBe("aborted");
      await expectIn(inst, "turn interrupted", state(SessionStatus.IDLE, StatusReason.INTERRUPTED));
      if (hold === true) await driver.clearInput?.(t, inst.target);
    };

    /**
     * Answers the pending prompt of `inst` through the Hub with its first choice of `effect`, once the
     * same prompt has been read twice (a person reads a drawn dialog before answering it).
     */
    const answerWith = async (inst: CliInstance, effect: PromptEffect) => {
      for (let attempt = 1; ; attempt++) {
        const session = await promptReadTwice((what, accept) => expectIn(inst, what, accept));
        const prompt = session.pendingPrompt;
        const choice = prompt?.choices.find((c) => c.effect === effect);
        if (!prompt || !choice) throw new Error(`no ${PromptEffect[effect]} choice in ${JSON.stringify(prompt)}`);
        try {
          const answer = await hub.answerPrompt({
            name: inst.name,
            fingerprint: prompt.fingerprint,
            choiceId: choice.id,
          });
          expect(answer.detail).not.toMatch(/still on screen/);
          return;
        } catch (err) {
          // A CLI still drawing its dialog (opencode) can change it after it was read twice alike:
          // AnswerPrompt then refuses with nothing typed, as it must, and a person answers what is
          // shown now. Any other refusal, or a second one, fails the step.
          const changed =
            err instanceof ConnectError &&
            err.code === Code.FailedPrecondition &&
            /^the prompt changed/.test(err.rawMessage);
          if (!changed || attempt >= ANSWER_ATTEMPTS) throw err;
        }
      }
    };

    /** The steps every instance runs (`where` names the situation in test titles). */
    const instanceSteps = (inst: CliInstance, where: string) => {
      let toolTurn: ReturnType<MockModelServer["enqueue"]>;
      let answerTurn: ReturnType<MockModelServer["enqueue"]>;
      let toolPrompt = "";
      let marker = "";

      it(`${where}: reports working while a turn runs`, { timeout: STEP_TIMEOUT_MS }, async () => {
        const server = queueFor();
        marker = `compat-approved-${inst.sessionId.slice(-1)}.txt`;
        toolTurn = server.enqueue({ toolCall: driver.approvalToolCall(`echo ${MARKER_TEXT} > ${marker}`), hold: true });
        answerTurn = server.enqueue({ text: REPLY_DONE, hold: true });
        toolPrompt = nextPrompt("please write the compat marker file", inst);
        await typePrompt(requireValue(tmux), inst.target, toolPrompt, ECHO_TIMEOUT_MS, driver.submitQuietMs);
        const request = await modelAsked(toolTurn.requested);
        expect(JSON.stringify(request.body)).toContain(toolPrompt);
        await expectIn(inst, "model request open", state(SessionStatus.WORKING, StatusReason.ACTIVE_TURN));
        expect(foreignConnections(await cliPids())).toEqual([]);
      });

      it(`${where}: reports review with the approval prompt`, { timeout: STEP_TIMEOUT_MS }, async () => {
        toolTurn.release();
        const session = await expectIn(
          inst,
          "approval asked",
          state(SessionStatus.REVIEW, StatusReason.INPUT_PROMPT, (s) => s.prompt.includes(driver.approvalQuestion)),
        );
        expect(session.promptKind).toBe(PromptKind.APPROVAL);
      });

      it(`${where}: shows the whole command of the approval with its choices`, {
        timeout: STEP_TIMEOUT_MS,
      }, async () => {
        const session = await expectIn(
          inst,
          "the approval read in full",
          (s) => (s.pendingPrompt?.choices.length ?? 0) > 0,
        );
        const prompt = session.pendingPrompt;
        await recordScreen({ tmux: requireValue(tmux), instance: inst }, driver.sessionPrefix, "approval");
        expect(prompt?.command, JSON.stringify(prompt)).toBe(`echo ${MARKER_TEXT} > ${marker}`);
        expect(prompt?.choices.map((c) => c.effect)).toContain(PromptEffect.ALLOW_ONCE);
      });

      it(`${where}: reports working again once the tool is approved through AnswerPrompt`, {
        timeout: STEP_TIMEOUT_MS,
      }, async () => {
        await answerWith(inst, PromptEffect.ALLOW_ONCE);
        const request = await modelAsked(answerTurn.requested, `${driver.label} to send the tool result to the model`);
        expect(driver.isToolResult(request)).toBe(true);
        await expectIn(inst, "approved, model request open", state(SessionStatus.WORKING, StatusReason.ACTIVE_TURN));
        expect(await readFile(join(requireValue(facts.prepared).cwd, marker), "utf8")).toBe(`${MARKER_TEXT}\n`);
      });

      it(`${where}: reports the finished turn as an unseen completion, idle once seen`, {
        timeout: STEP_TIMEOUT_MS,
      }, async () => {
        answerTurn.release();
        expect(await within(answerTurn.ended, MODEL_REQUEST_TIMEOUT_MS, "the answer to stream")).toBe("completed");
        const session = await expectIn(
          inst,
          "turn done",
          state(SessionStatus.REVIEW, StatusReason.UNSEEN_COMPLETION, (s) => s.completionId !== ""),
        );
        record(inst, session.completionId);
        const marked = await hub.markSessionSeen({ name: inst.name, completionId: session.completionId });
        expect(marked.session?.status).toBe(SessionStatus.IDLE);
        await stepContext(inst).markSeen(session.completionId);
      });

      it(`${where}: shows the typed prompt and the model's reply in chat`, { timeout: STEP_TIMEOUT_MS }, async () => {
        const texts = (messages: readonly ChatMessage[], role: ChatRole) =>
          messages.filter((m) => m.role === role).map((m) => m.text.trim());
        let last: readonly ChatMessage[] = [];
        // The native state can say "done" a moment before the TUI has drawn the whole reply.
        const messages = await waitFor(
          async () => {
            last = (await hub.getChat({ name: inst.name })).messages;
            const drawn =
              texts(last, ChatRole.USER).includes(toolPrompt) && texts(last, ChatRole.ASSISTANT).includes(REPLY_DONE);
            return drawn ? last : undefined;
          },
          "the typed prompt and the model's reply in GetChat",
          STATUS_TIMEOUT_MS,
        ).catch(async (err: Error) => {
          throw new Error(`${err.message}\nlast GetChat: ${describeChat(last)}\n${await describeAll()}`);
        });
        const seen = `GetChat: ${describeChat(messages)}`;
        // Exactly what was typed and what the model said: screens drawn by the TUI are not messages.
        // (The second instance starts empty; the first one's earlier prompts may have scrolled away.)
        expect(texts(messages, ChatRole.USER).at(-1), seen).toBe(toolPrompt);
        expect(texts(messages, ChatRole.ASSISTANT).at(-1), seen).toBe(REPLY_DONE);
        expect(requireValue(mock).unexpected).toEqual([]);
      });

      it(`${where}: goes idle as interrupted when Escape comes before the first reply`, {
        timeout: STEP_TIMEOUT_MS,
      }, async () => {
        await interruptedTurn(inst, true);
      });

      it(`${where}: goes idle as interrupted when Escape comes mid-reply`, { timeout: STEP_TIMEOUT_MS }, async () => {
        await interruptedTurn(inst, "mid-text");
      });

      it(`${where}: goes idle as interrupted when the approval dialog gets Escape`, {
        timeout: STEP_TIMEOUT_MS,
      }, async () => {
        const server = queueFor();
        const t = requireValue(tmux);
        const ask = server.enqueue({ toolCall: driver.approvalToolCall(`echo never > compat-never.txt`) });
        await typePrompt(
          t,
          inst.target,
          nextPrompt("write a file I will refuse", inst),
          ECHO_TIMEOUT_MS,
          driver.submitQuietMs,
        );
        await modelAsked(ask.requested);
        await expectIn(inst, "approval asked", state(SessionStatus.REVIEW, StatusReason.INPUT_PROMPT));
        // Denied through AnswerPrompt where the CLI offers a plain "No"; else with its Escape.
        const read = await expectIn(
          inst,
          "the approval read in full",
          (s) => (s.pendingPrompt?.choices.length ?? 0) > 0,
        );
        if (read.pendingPrompt?.choices.some((c) => c.effect === PromptEffect.DENY))
          await answerWith(inst, PromptEffect.DENY);
        else await driver.cancelApproval(t, inst.target);
        await expectIn(inst, "approval refused", state(SessionStatus.IDLE, StatusReason.INTERRUPTED));
        expect(server.unexpected).toEqual([]);
      });

      it(`${where}: goes idle as interrupted when Escape comes during a tool call`, {
        timeout: STEP_TIMEOUT_MS,
      }, async () => {
        const server = queueFor();
        const t = requireValue(tmux);
        const ask = server.enqueue({ toolCall: driver.approvalToolCall(SLOW_COMMAND) });
        await typePrompt(
          t,
          inst.target,
          nextPrompt("run the slow compat command", inst),
          ECHO_TIMEOUT_MS,
          driver.submitQuietMs,
        );
        await modelAsked(ask.requested);
        await expectIn(inst, "approval asked", state(SessionStatus.REVIEW, StatusReason.INPUT_PROMPT));
        await driver.approve(t, inst.target);
        await expectIn(inst, "tool running", state(SessionStatus.WORKING, StatusReason.ACTIVE_TURN));
        await driver.interrupt(t, inst.target);
        await expectIn(inst, "tool call interrupted", state(SessionStatus.IDLE, StatusReason.INTERRUPTED));
        expect(server.unexpected).toEqual([]);
      });

      for (const own of driver.ownSteps ?? []) {
        it(`${where}: ${own.title}`, { timeout: STEP_TIMEOUT_MS }, async () => {
          queueFor();
          await own.run(stepContext(inst));
        });
      }
    };

    beforeAll(async () => {
      requireInstalledCli(driver.bin, driver.version);
      mock = await startMockModelServer({ model: driver.model, sideReply: (r) => driver.sideReply(r) });
      facts.prepared = await driver.prepare(mock.baseUrl);
      tmux = createTestTmux();
      // The Hub's own HOME is the CLIs' (as on a person's machine): ListConversations reads their logs.
      hubProcess = await startServerProcess({
        kind: "hub",
        tmuxSocket: tmux.socketName,
        token: TOKEN,
        env: { HOME: facts.prepared.home, CLAUDE_CONFIG_DIR: "", CODEX_HOME: "", XDG_DATA_HOME: "" },
      });
      hub = connectHubSessions(hubProcess.url, TOKEN);
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
      // The panes' own processes; Codex's daemon starts below a pane too but is stopped its own way.
      let panePids: number[] = [];
      await step(async () => {
        const background = facts.prepared?.backgroundPids() ?? [];
        const t = tmux;
        const trees =
          t === undefined
            ? []
            : await Promise.all(
                started.map((i) =>
                  paneInfo(t, i.target).then(
                    (p) => processTree(p.pid),
                    () => [] as number[],
                  ),
                ),
              );
        panePids = trees.flat().filter((pid) => !background.includes(pid));
      });
      await step(async () => hubProcess?.stop());
      await step(async () => tmux?.close());
      await step(async () => {
        // The CLIs get SIGHUP with their tmux server; anything of the panes still running is killed by pid.
        const exited = await waitFor(
          () => panePids.every((pid) => !isRunning(pid)),
          "the panes' processes to exit",
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

    it("alone: starts idle, with no turn", { timeout: STEP_TIMEOUT_MS }, async () => {
      await start(a, requireValue(facts.prepared).command);
    });
    instanceSteps(a, "alone");

    it("alone, at 80x24: after three turns the whole chat has every prompt and reply once, in order", {
      timeout: HISTORY_STEP_TIMEOUT_MS,
    }, async () => {
      await resize(a, SMALL_COLS, SMALL_ROWS);
      const turns = [];
      for (let i = 1; i <= HISTORY_TURNS; i++) turns.push(await historyTurn(a, `a${i}`));
      await expectChatTurns(a, turns, []);
      await resize(a, WINDOW_COLS, WINDOW_ROWS);
    });

    it("two per folder: a second instance starts idle next to the first", { timeout: STEP_TIMEOUT_MS }, async () => {
      await start(b, requireValue(facts.prepared).command);
    });
    instanceSteps(b, "two per folder, the second");

    it("two per folder, at 80x24: three turns in each, each whole chat holds only its own, once, in order", {
      timeout: HISTORY_STEP_TIMEOUT_MS,
    }, async () => {
      await resize(a, SMALL_COLS, SMALL_ROWS);
      await resize(b, SMALL_COLS, SMALL_ROWS);
      const turnsA = [];
      const turnsB = [];
      for (let i = 1; i <= HISTORY_TURNS; i++) {
        turnsA.push(await historyTurn(a, `two-a${i}`));
        turnsB.push(await historyTurn(b, `two-b${i}`));
      }
      const texts = (turns: readonly { prompt: string; reply: string }[]) =>
        turns.flatMap((t) => [t.prompt, t.reply.split("\n")[0] ?? t.reply]);
      await expectChatTurns(a, turnsA, texts(turnsB));
      await expectChatTurns(b, turnsB, texts(turnsA));
      await resize(a, WINDOW_COLS, WINDOW_ROWS);
      await resize(b, WINDOW_COLS, WINDOW_ROWS);
    });

    // After the two-instance chat step: the first instance's turn is the folder's newest, which the
    // resumed step's `resume --last` / `--continue` picks up.
    it("two per folder: the first finishes a turn while the second stays as it was", {
      timeout: STEP_TIMEOUT_MS,
    }, async () => {
      await completedTurn(a, REPLY_DONE);
      expect(foreignConnections(await cliPids())).toEqual([]);
    });

    // The resume steps, for the CLIs whose resume compat has shown to work (CliDriver.resumeNotVerified).
    const resumeStep: typeof it =
      driver.resumeNotVerified === undefined ? it : ((() => undefined) as unknown as typeof it);
    resumeStep(
      "resumed: the first instance's conversation resumed next to the second is idle, then runs a turn",
      {
        timeout: STEP_TIMEOUT_MS,
      },
      async () => {
        await hub.stopSession({ name: a.name });
        holding.delete(a.name);
        started.splice(started.indexOf(a), 1);
        await resumeLater();
        await start(resumed, requireValue(facts.prepared).resumeCommand);
        resumedPrompt = await completedTurn(resumed, REPLY_RESUMED);
        expect(requireValue(mock).unexpected).toEqual([]);
        expect(foreignConnections(await cliPids())).toEqual([]);
      },
    );

    resumeStep(
      "resumed by id: ListConversations names the open conversations, and CreateSession.resume goes on with A's",
      {
        timeout: STEP_TIMEOUT_MS,
      },
      async () => {
        const prepared = requireValue(facts.prepared);
        const listed = await hub.listConversations({ parent: "nodes/local", cwd: prepared.cwd, cli: driver.cli });
        const resumedOne = listed.conversations.find((c) => c.openInSession === resumed.name);
        const second = listed.conversations.find((c) => c.openInSession === b.name);
        const seen = listed.conversations.map((c) => `${c.id} open in ${c.openInSession || "-"}: ${c.lastPrompt}`);
        expect(resumedOne, seen.join("\n")).toBeDefined();
        expect(second).toBeDefined();
        expect(resumedOne?.id).not.toBe(second?.id);
        expect(resumedOne?.cwd).toBe(prepared.cwd);
        expect(resumedOne?.turnCount).toBeGreaterThan(1);
        await hub.stopSession({ name: resumed.name });
        holding.delete(resumed.name);
        started.splice(started.indexOf(resumed), 1);
        await resumeLater();
        await start(byId, prepared.command, resumedOne?.id);
        // Its chat holds the old turns before any new one.
        let users: string[] = [];
        let detail = "";
        await waitFor(
          async () => {
            users = (await wholeChat(byId)).filter((m) => m.role === ChatRole.USER).map((m) => m.text.trim());
            detail = (await hub.getSession({ name: byId.name })).session?.statusDetail ?? "";
            return users.includes(resumedPrompt) || undefined;
          },
          () =>
            `${driver.label} ${byId.sessionId}: the resumed conversation's old turn ${JSON.stringify(resumedPrompt)} ` +
            `in the chat (it held ${JSON.stringify(users)}; status detail: ${detail})`,
          STATUS_TIMEOUT_MS,
        );
        await completedTurn(byId, REPLY_RESUMED_BY_ID);
        const again = await hub.listConversations({ parent: "nodes/local", cwd: prepared.cwd, cli: driver.cli });
        expect(again.conversations.find((c) => c.openInSession === byId.name)?.lastPrompt).toMatch(
          /^please answer briefly/,
        );
        expect(requireValue(mock).unexpected).toEqual([]);
      },
    );

    resumeStep(
      "queued: a prompt queued during a turn is typed once that turn ends, and runs as the next turn",
      {
        timeout: STEP_TIMEOUT_MS,
      },
      async () => {
        const server = queueFor();
        const before = server.enqueue({ text: REPLY_BEFORE_QUEUED, hold: true });
        const after = server.enqueue({ text: REPLY_QUEUED, hold: true });
        await typePrompt(requireValue(tmux), byId.target, nextPrompt("please answer briefly", byId), ECHO_TIMEOUT_MS);
        await modelAsked(before.requested);
        await expectIn(byId, "turn running", state(SessionStatus.WORKING, StatusReason.ACTIVE_TURN));
        const { message } = await hub.queueChatMessage({ name: byId.name, text: QUEUED_PROMPT });
        await expectIn(
          byId,
          "turn running, one message queued",
          state(SessionStatus.WORKING, StatusReason.ACTIVE_TURN, (s) => s.queuedMessages === 1),
        );
        expect((await hub.listQueuedMessages({ name: byId.name })).messages.map((m) => [m.id, m.typing])).toEqual([
          [message?.id, false],
        ]);
        before.release();
        facts.unobserved.set(byId.sessionId, (facts.unobserved.get(byId.sessionId) ?? 0) + 1);
        const request = await modelAsked(after.requested, `${driver.label} to ask for the queued prompt`);
        expect(JSON.stringify(request.body)).toContain(QUEUED_PROMPT);
        await expectIn(
          byId,
          "the queued prompt's turn running",
          state(SessionStatus.WORKING, StatusReason.ACTIVE_TURN, (s) => s.queuedMessages === 0),
        );
        after.release();
        const done = await expectIn(
          byId,
          "queued turn done",
          state(SessionStatus.REVIEW, StatusReason.UNSEEN_COMPLETION, (s) => s.completionId !== ""),
        );
        record(byId, done.completionId);
        await stepContext(byId).markSeen(done.completionId);
        const users = (await wholeChat(byId)).filter((m) => m.role === ChatRole.USER).map((m) => m.text.trim());
        expect(users.filter((u) => u === QUEUED_PROMPT)).toHaveLength(1);
        expect((await hub.listQueuedMessages({ name: byId.name })).messages).toEqual([]);
        expect(server.unexpected).toEqual([]);
      },
    );

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
