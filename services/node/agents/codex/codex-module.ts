import { basename, dirname, join } from "node:path";
import { Cli, PromptKind } from "../../../../gen/staragent/v1/session_pb.js";
import {
  type AgentContext,
  type AgentModule,
  type AgentSignals,
  observeSafely,
  openedBeforeStart,
  PROCESS_START_SLACK_MS,
  processKey,
  writtenSince,
} from "../agent.js";
import { LogBinder } from "../log-binding.js";
import { LogFollower } from "../log-follower.js";
import type { ProcessInfo } from "../process-table.js";
import { programNames } from "../program.js";
import { codexChatParser } from "./chat-parser.js";
import { codexRolloutReducer } from "./rollout.js";
import { RolloutFinder, rolloutFolders } from "./rollout-finder.js";
import { CodexRolloutHistory } from "./rollout-history.js";
import { codexScreenPrompt, codexScreenWorking, codexTitleSignal } from "./screen.js";

/** A Codex thread id (a UUID), as `codex resume <id>` takes it. */
const THREAD_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The Codex home of a process: `$CODEX_HOME`, else `$HOME/.codex`. */
export function codexHome(env: Readonly<Record<string, string | undefined>>): string {
  return env.CODEX_HOME || join(env.HOME || "/", ".codex");
}

/**
 * Codex CLI: recognised by its argv (`codex`, or `node …/codex.js`); status from the rollout matched by
 * cwd and time, the pane title (spinner, `Action Required`) and the pane bottom for approvals, which
 * Codex never persists.
 */
export class CodexModule implements AgentModule {
  readonly cli = Cli.CODEX;
  readonly name = "codex";
  readonly scope = "tree";
  readonly adoptable = true;
  readonly chatParser = codexChatParser;
  readonly history = new CodexRolloutHistory();
  private readonly rollouts = new LogFollower(codexRolloutReducer);
  private readonly finder = new RolloutFinder();
  private readonly binder = new LogBinder();

  recognises(process: ProcessInfo): boolean {
    const { names } = programNames(process);
    // `codex app-server` is the background daemon, never a pane's TUI.
    return (names.has("codex") || names.has("codex.js")) && !process.argv.includes("app-server");
  }

  observe(context: AgentContext): Promise<AgentSignals> {
    return observeSafely("Codex", () => this.read(context));
  }

  /** The rollout of the pane's process, and how it was bound. */
  private async bind(context: AgentContext, home: string): Promise<{ path: string | undefined; how: string }> {
    const { process, pane, processStart } = context;
    const resumeAt = process.argv.indexOf("resume");
    const resumed = resumeAt >= 0;
    // `codex resume <thread id>` names its rollout; `codex resume --last` and the picker do not.
    const threadId = resumed ? (process.argv.slice(resumeAt + 1).find((a) => THREAD_ID.test(a)) ?? "") : "";
    const named = threadId ? await this.finder.byThreadId(home, threadId) : undefined;
    const siblings = context.siblings.map(processKey);
    const files = named
      ? []
      : await this.finder.writtenSince(
          home,
          pane.paneCurrentPath,
          new Date(processStart.getTime() - PROCESS_START_SLACK_MS),
          resumed,
        );
    const candidates = await Promise.all(
      files.map(async (f) => ({
        key: f.path,
        updatedMs: f.mtimeMs,
        newestPrompt: siblings.length > 0 ? ((await this.rollouts.read(f.path))?.state.prompt ?? "") : "",
      })),
    );
    const binding = await this.binder.bind({
      process: processKey(process),
      siblings,
      candidates,
      explicit: named ? { key: named, how: "its resume argument names the thread" } : undefined,
      screen: () => context.visibleScreen(0),
    });
    return { path: binding.key, how: binding.how };
  }

  private async read(context: AgentContext): Promise<AgentSignals> {
    const { pane, processStart } = context;
    const home = codexHome(await context.env());
    const bound = await this.bind(context, home);
    const path = bound.path;
    const log = path ? await this.rollouts.read(path) : undefined;
    const fresh = log && writtenSince(log.mtimeMs, processStart) ? log : undefined;
    // A turn started before this process belongs to an earlier run (`codex resume`).
    const earlier = fresh !== undefined && openedBeforeStart(fresh.state.turnStartedAt, processStart);
    const state = earlier ? undefined : fresh?.state;
    const title = codexTitleSignal(pane.paneTitle);
    const details: string[] = [
      fresh
        ? `rollout ${basename(fresh.path)} (${bound.how}): ${earlier ? "its newest turn predates this process" : fresh.state.decidedBy}`
        : `no rollout (${bound.how})`,
    ];
    if (title !== "none") details.push(`title: ${title}`);

    let turn: AgentSignals["turn"] = state?.turn ?? "none";
    let prompt: AgentSignals["prompt"];
    const pending = (state?.pendingCalls.length ?? 0) > 0;
    const legacyOpen = state !== undefined && !state.taskEvents && turn === "active";
    if (title === "approval" || !state || (turn === "active" && pending) || legacyOpen) {
      const screen = await context.screen(fresh?.reread ? 0 : undefined);
      prompt = codexScreenPrompt(screen);
      if (!prompt && title === "approval") prompt = { kind: PromptKind.APPROVAL, text: "Action Required" };
      const working = codexScreenWorking(screen) || title === "working";
      if (!state && working) turn = "active";
      if (legacyOpen && !working && !pending) turn = "completed";
      details.push(prompt ? "prompt on screen" : working ? "working on screen" : "screen quiet");
    }
    return {
      turn,
      completionId: turn !== "completed" ? "" : legacyOpen ? (state?.lastUserTurn ?? "") : (state?.completionId ?? ""),
      prompt,
      detail: details.join("; "),
      lastActivity: fresh ? new Date(fresh.mtimeMs) : undefined,
      lastUserTurn: state?.lastUserTurn ?? "",
      hasNativeLog: true,
      chatLog: path ? { path, session: "" } : undefined,
      chatLogDetail: bound.how,
      statePaths: [path ? dirname(path) : (rolloutFolders(home, processStart)[0] ?? join(home, "sessions"))],
    };
  }
}
