import { basename, join } from "node:path";
import { Cli, PromptKind } from "../../../../gen/staragent/v1/session_pb.js";
import {
  type AgentContext,
  type AgentModule,
  type AgentSignals,
  observeSafely,
  openedBeforeStart,
  PROCESS_START_SLACK_MS,
  type PromptSignal,
  wholeScreen,
  writtenSince,
} from "../agent.js";
import { bindProcessLog } from "../bound-log.js";
import { LogBinder } from "../log-binding.js";
import { LogFollower } from "../log-follower.js";
import type { ProcessInfo } from "../process-table.js";
import { programNames } from "../program.js";
import { toPendingPrompt } from "../prompt.js";
import { arrayField, objects, stringField } from "../record-fields.js";
import { replyExcerpt } from "../reply-excerpt.js";
import { TotalsFollower } from "../usage/totals-follower.js";
import type { LimitReached } from "../usage/usage.js";
import { claudeChatParser } from "./chat-parser.js";
import { claudeConfigDir } from "./claude-config.js";
import { ClaudeConversations } from "./claude-conversations.js";
import { readClaudePrompt } from "./prompt-reader.js";
import { claudeScreenPrompt, claudeScreenWorking, claudeTitleWorking } from "./screen.js";
import { type ClaudeLiveState, readLiveState, sessionsFilePath } from "./sessions-file.js";
import { type ClaudeTurnState, claudeTranscriptReducer, type PendingTool } from "./transcript.js";
import { TranscriptFinder } from "./transcript-finder.js";
import { ClaudeTranscriptHistory } from "./transcript-history.js";
import { claudeLimitReached, claudeUsage, claudeUsageReducer } from "./usage.js";

export { claudeConfigDir } from "./claude-config.js";

/**
 * How long a transcript may lag the sessions file: when the sessions file says `idle` but the
 * transcript's newest turn has no end yet, the turn counts as running until the transcript has been
 * quiet this long (Claude Code writes turn ends lazily, 0.2 to 1 s late), then as completed.
 */
const TRANSCRIPT_SETTLE_MS = 3_000;
/**
 * Without a sessions file, how long a prompt nobody answered must have been quiet before a quiet
 * screen means the turn was interrupted (Esc before the first reply writes nothing): the spinner is
 * drawn at once, but the screen read may predate it.
 */
const UNANSWERED_SETTLE_MS = 1_500;

/** A question asked through a tool whose result is the answer (docs/status.md "Per CLI": AskUserQuestion, ExitPlanMode). */
function toolQuestion(pending: readonly PendingTool[]): PromptSignal | undefined {
  for (const tool of pending) {
    if (tool.name === "AskUserQuestion") {
      const first = objects(arrayField(tool.input, "questions"))[0];
      return { kind: PromptKind.QUESTION, text: stringField(first, "question") || "Claude has a question" };
    }
    if (tool.name === "ExitPlanMode") return { kind: PromptKind.PLAN, text: "Would you like to proceed?" };
  }
  return undefined;
}

/**
 * Claude Code: recognised by its argv (`claude`, or node running `@anthropic-ai/claude-code`); status
 * from `sessions/<pid>.json` (2.1.x) where present, the transcript always (turn identity = uuid of the
 * prompt that opened the turn), and the pane bottom for approval, plan and trust prompts. Without a
 * sessions file (before 2.1) a process is bound to its own transcript by `LogBinder`: the folder's
 * newest when it is the only Claude Code there, else the one whose newest prompt its pane shows.
 */
export class ClaudeModule implements AgentModule {
  readonly cli = Cli.CLAUDE;
  readonly name = "claude";

  readPrompt(screen: string, expectedQuestion: string) {
    return readClaudePrompt(screen, [], expectedQuestion);
  }
  readonly scope = "tree";
  readonly adoptable = true;
  /** Its own interrupt key (docs/compat.md). */
  readonly interrupt = { keys: ["Escape"] };
  readonly chatParser = claudeChatParser;
  readonly history = new ClaudeTranscriptHistory();
  readonly conversations = new ClaudeConversations();
  private readonly transcripts = new LogFollower(claudeTranscriptReducer);
  /** The conversation's totals: the whole transcript read once, then only what is appended. */
  private readonly usage = new TotalsFollower(claudeUsageReducer);
  private readonly finder = new TranscriptFinder();
  private readonly binder = new LogBinder();

  recognises(process: ProcessInfo): boolean {
    const { names, script } = programNames(process);
    return names.has("claude") || script.includes("/@anthropic-ai/claude-code/");
  }

  observe(context: AgentContext): Promise<AgentSignals> {
    return observeSafely("Claude Code", () => this.read(context));
  }

  /** The transcript of the pane's process, and how it was bound. */
  private async bind(
    context: AgentContext,
    configDir: string,
    live: ClaudeLiveState | undefined,
  ): Promise<{ path: string | undefined; how: string; dir: string | undefined; screenRead: boolean }> {
    const { process, pane, processStart } = context;
    const dir = await this.finder.projectDir(configDir, live?.cwd || pane.paneCurrentPath);
    if (!dir) return { path: undefined, how: "no project folder yet", dir, screenRead: false };
    const explicit = live
      ? { key: join(dir, `${live.sessionId}.jsonl`), how: `sessions/${process.pid}.json names it` }
      : undefined;
    const files = explicit ? [] : await this.finder.writtenSince(dir, processStart.getTime() - PROCESS_START_SLACK_MS);
    const binding = await bindProcessLog(
      this.binder,
      context,
      files.map((f) => ({ key: f.path, updatedMs: f.mtimeMs })),
      async (f) => (await this.transcripts.read(f.key))?.state.promptText,
      explicit,
    );
    return { path: binding.key, how: binding.how, dir, screenRead: binding.screenRead };
  }

  private async read(context: AgentContext): Promise<AgentSignals> {
    const { process, pane, processStart } = context;
    const configDir = claudeConfigDir(await context.env());
    const live = await readLiveState(configDir, process.pid);
    const bound = await this.bind(context, configDir, live);
    const log = bound.path ? await this.transcripts.read(bound.path) : undefined;
    const fresh = log && writtenSince(log.mtimeMs, processStart) ? log : undefined;
    // A turn opened before this process started belongs to an earlier run (a resumed conversation).
    const earlier = fresh !== undefined && openedBeforeStart(fresh.state.promptAt, processStart);
    const state: ClaudeTurnState | undefined = earlier ? undefined : fresh?.state;
    const details: string[] = [];
    if (live) details.push(`sessions/${process.pid}.json: ${live.status || "unknown"}`);
    if (fresh) {
      details.push(
        `transcript ${basename(fresh.path)} (${bound.how}): ${earlier ? "its newest turn predates this process" : fresh.state.decidedBy}`,
      );
    } else if (log) details.push(`transcript ${basename(log.path)} predates the process`);
    else details.push(`no transcript (${bound.how})`);

    let turn: AgentSignals["turn"] = state?.turn ?? "none";
    if (live?.status === "busy" || live?.status === "waiting") turn = "active";
    else if (live?.status === "idle" && turn === "active" && state && fresh) {
      // Esc before the model's first reply writes nothing to the transcript (docs/status.md, "Per CLI"): the
      // sessions file turned idle after the prompt, and nothing answered it.
      if (!state.answered && live.statusSince > state.promptAt) turn = "interrupted";
      // Settled: a turn the model answered completed; one nothing answered was interrupted (builds
      // whose sessions file has no statusUpdatedAt).
      else if (Date.now() - fresh.mtimeMs > TRANSCRIPT_SETTLE_MS) turn = state.answered ? "completed" : "interrupted";
    }

    let prompt = turn === "active" && state ? toolQuestion(state.pending) : undefined;
    let screenLimit: LimitReached | undefined;
    const pendingTool = (state?.pending.length ?? 0) > 0;
    const unanswered = !live && turn === "active" && state !== undefined && !state.answered && fresh !== undefined;
    const needScreen =
      !prompt &&
      (live?.status === "waiting" ||
        !fresh ||
        (!live && turn === "active" && (pendingTool || state?.ambiguousEnd || unanswered)));
    if (needScreen) {
      const screen = await context.screen(fresh?.reread ? 0 : undefined);
      prompt = claudeScreenPrompt(screen);
      screenLimit = claudeLimitReached(screen);
      if (!prompt && live?.status === "waiting") {
        // 2.1.332 waits for a "permission prompt" (approval) or "input needed" (AskUserQuestion, whose
        // tool call may reach the transcript a moment after the sessions file says so).
        const approval = live.waitingFor === "" || live.waitingFor.includes("permission");
        prompt = {
          kind: approval ? PromptKind.APPROVAL : PromptKind.QUESTION,
          text: `waiting for ${live.waitingFor || "input"}`,
        };
      }
      const working = claudeScreenWorking(screen) || claudeTitleWorking(pane.paneTitle);
      if (!fresh && !live && working) turn = "active";
      if (!live && state?.ambiguousEnd && turn === "active" && !working) turn = "completed";
      if (unanswered && !working && !prompt && fresh && Date.now() - fresh.mtimeMs > UNANSWERED_SETTLE_MS) {
        turn = "interrupted";
      }
      details.push(prompt ? "prompt on screen" : working ? "working on screen" : "screen quiet");
    }
    if (prompt) {
      const read = readClaudePrompt(
        await wholeScreen(context, fresh?.reread ? 0 : undefined),
        state?.pending ?? [],
        prompt.kind === PromptKind.QUESTION ? prompt.text : "",
      );
      if (read) prompt = { ...prompt, pending: toPendingPrompt(this.name, read) };
    }
    const promptUuid = state?.promptUuid ?? "";
    // Only when the transcript changed does the follower read (its appended bytes); else one stat.
    const totals = bound.path && (fresh || live) ? await this.usage.read(bound.path) : undefined;
    return {
      usage: totals ? claudeUsage(totals.state, screenLimit, totals.complete) : undefined,
      pending: totals?.complete === false,
      turn,
      completionId: turn === "completed" ? promptUuid : "",
      replyExcerpt: turn === "completed" ? replyExcerpt(state?.replyText ?? "") : "",
      prompt,
      detail: details.join("; "),
      lastActivity: fresh ? new Date(fresh.mtimeMs) : undefined,
      lastUserTurn: promptUuid,
      lastUserTurnAt: state?.promptAt ?? 0,
      lastQueuedMessage: state?.queued ?? "",
      lastQueuedAt: state?.queuedAt ?? 0,
      hasNativeLog: true,
      chatLog: bound.path ? { path: bound.path, session: "" } : undefined,
      chatLogDetail: bound.how,
      statePaths: [sessionsFilePath(configDir, process.pid), bound.dir ?? join(configDir, "projects")],
    };
  }
}
