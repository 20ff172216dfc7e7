import { basename, dirname, join } from "node:path";
import { Cli, PromptKind } from "../../../../gen/staragent/v1/session_pb.js";
import {
  type AgentContext,
  type AgentModule,
  type AgentSignals,
  observeSafely,
  type PromptSignal,
  writtenSince,
} from "../agent.js";
import { LogFollower } from "../log-follower.js";
import type { ProcessInfo } from "../process-table.js";
import { programNames } from "../program.js";
import { arrayField, objects, stringField } from "../record-fields.js";
import { claudeScreenPrompt, claudeScreenWorking, claudeTitleWorking } from "./screen.js";
import { readLiveState, sessionsFilePath } from "./sessions-file.js";
import { type ClaudeTurnState, claudeTranscriptReducer, type PendingTool } from "./transcript.js";
import { TranscriptFinder } from "./transcript-finder.js";

/**
 * How long a transcript may lag the sessions file: when the sessions file says `idle` but the
 * transcript's newest turn has no end yet, the turn counts as running until the transcript has been
 * quiet this long (Claude Code writes turn ends lazily, 0.2 to 1 s late), then as completed.
 */
const TRANSCRIPT_SETTLE_MS = 3_000;

/** The config folder of a Claude Code process: `$CLAUDE_CONFIG_DIR`, else `$HOME/.claude`. */
export function claudeConfigDir(env: Readonly<Record<string, string | undefined>>): string {
  return env.CLAUDE_CONFIG_DIR || join(env.HOME || "/", ".claude");
}

/** A question asked through a tool whose result is the answer (FORMATS.md: AskUserQuestion, ExitPlanMode). */
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
 * prompt that opened the turn), and the pane bottom for approval, plan and trust prompts.
 */
export class ClaudeModule implements AgentModule {
  readonly cli = Cli.CLAUDE;
  readonly name = "claude";
  private readonly transcripts = new LogFollower(claudeTranscriptReducer);
  private readonly finder = new TranscriptFinder();

  recognises(process: ProcessInfo): boolean {
    const { names, script } = programNames(process);
    return names.has("claude") || script.includes("/@anthropic-ai/claude-code/");
  }

  observe(context: AgentContext): Promise<AgentSignals> {
    return observeSafely("Claude Code", () => this.read(context));
  }

  private async read(context: AgentContext): Promise<AgentSignals> {
    const { process, pane, processStart } = context;
    const configDir = claudeConfigDir(await context.env());
    const live = await readLiveState(configDir, process.pid);
    const path = await this.finder.find(
      `${process.pid}:${process.startTicks}`,
      configDir,
      live?.cwd || pane.paneCurrentPath,
      live?.sessionId,
    );
    const log = path ? await this.transcripts.read(path) : undefined;
    const fresh = log && writtenSince(log.mtimeMs, processStart) ? log : undefined;
    const state: ClaudeTurnState | undefined = fresh?.state;
    const details: string[] = [];
    if (live) details.push(`sessions/${process.pid}.json: ${live.status || "unknown"}`);
    if (fresh) details.push(`transcript ${basename(fresh.path)}: ${fresh.state.decidedBy}`);
    else if (log) details.push(`transcript ${basename(log.path)} predates the process`);
    else details.push("no transcript yet");

    let turn: AgentSignals["turn"] = state?.turn ?? "none";
    if (live?.status === "busy" || live?.status === "waiting") turn = "active";
    else if (
      live?.status === "idle" &&
      turn === "active" &&
      fresh &&
      Date.now() - fresh.mtimeMs > TRANSCRIPT_SETTLE_MS
    ) {
      turn = "completed";
    }

    let prompt = turn === "active" && state ? toolQuestion(state.pending) : undefined;
    const pendingTool = (state?.pending.length ?? 0) > 0;
    const needScreen =
      !prompt &&
      (live?.status === "waiting" || !fresh || (!live && turn === "active" && (pendingTool || state?.ambiguousEnd)));
    if (needScreen) {
      const screen = await context.screen(fresh?.reread ? 0 : undefined);
      prompt = claudeScreenPrompt(screen);
      if (!prompt && live?.status === "waiting") {
        prompt = { kind: PromptKind.APPROVAL, text: `waiting for ${live.waitingFor || "input"}` };
      }
      const working = claudeScreenWorking(screen) || claudeTitleWorking(pane.paneTitle);
      if (!fresh && !live && working) turn = "active";
      if (!live && state?.ambiguousEnd && turn === "active" && !working) turn = "completed";
      details.push(prompt ? "prompt on screen" : working ? "working on screen" : "screen quiet");
    }
    const promptUuid = state?.promptUuid ?? "";
    return {
      turn,
      completionId: turn === "completed" ? promptUuid : "",
      prompt,
      detail: details.join("; "),
      lastActivity: fresh ? new Date(fresh.mtimeMs) : undefined,
      lastUserTurn: promptUuid,
      hasNativeLog: true,
      statePaths: [sessionsFilePath(configDir, process.pid), path ? dirname(path) : join(configDir, "projects")],
    };
  }
}
