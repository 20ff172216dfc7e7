import { basename, dirname, join } from "node:path";
import { Cli, PromptKind } from "../../../../gen/staragent/v1/session_pb.js";
import {
  type AgentContext,
  type AgentModule,
  type AgentSignals,
  observeSafely,
  PROCESS_START_SLACK_MS,
  wholeScreen,
} from "../agent.js";
import { bindProcessLog, freshLog } from "../bound-log.js";
import { LogBinder } from "../log-binding.js";
import { LogFollower } from "../log-follower.js";
import type { ProcessInfo } from "../process-table.js";
import { programNames } from "../program.js";
import { toPendingPrompt } from "../prompt.js";
import { replyExcerpt } from "../reply-excerpt.js";
import { RecentUsageFollower } from "../usage/recent-follower.js";
import type { LimitReached } from "../usage/usage.js";
import { codexChatParser } from "./chat-parser.js";
import { CodexConversations } from "./codex-conversations.js";
import { codexHome } from "./codex-home.js";
import { readCodexPrompt } from "./prompt-reader.js";
import { codexRolloutReducer } from "./rollout.js";
import { RolloutFinder, rolloutFolders } from "./rollout-finder.js";
import { CodexRolloutHistory } from "./rollout-history.js";
import { codexScreenPrompt, codexScreenWorking, codexTitleSignal } from "./screen.js";
import { codexLimitReached, codexUsage, codexUsageReducer } from "./usage.js";

export { codexHome } from "./codex-home.js";

/** A Codex thread id (a UUID), as `codex resume <id>` takes it. */
const THREAD_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** How status_detail names Codex's logs. */
const LOG_WORDS = { log: "rollout", none: "no rollout", name: (path: string) => basename(path) };
/**
 * Codex CLI: recognised by its argv (`codex`, or `node …/codex.js`); status from the rollout matched by
 * cwd and time, the pane title (spinner, `Action Required`) and the pane bottom for approvals, which
 * Codex never persists.
 */
export class CodexModule implements AgentModule {
  readonly cli = Cli.CODEX;
  readonly name = "codex";

  readPrompt(screen: string) {
    return readCodexPrompt(screen);
  }
  readonly scope = "tree";
  readonly adoptable = true;
  /** Its own interrupt key (docs/compat.md). */
  readonly interrupt = { keys: ["Escape"] };
  readonly chatParser = codexChatParser;
  readonly history = new CodexRolloutHistory();
  readonly conversations = new CodexConversations();
  private readonly rollouts = new LogFollower(codexRolloutReducer);
  /** The newest `token_count` and `turn_context`, walked backward once, then followed forward. */
  private readonly usage = new RecentUsageFollower(codexUsageReducer);
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
    const files = named
      ? []
      : await this.finder.writtenSince(
          home,
          pane.paneCurrentPath,
          new Date(processStart.getTime() - PROCESS_START_SLACK_MS),
          resumed,
        );
    const binding = await bindProcessLog(
      this.binder,
      context,
      files.map((f) => ({ key: f.path, updatedMs: f.mtimeMs })),
      async (f) => (await this.rollouts.read(f.key))?.state.prompt,
      named ? { key: named, how: "its resume argument names the thread" } : undefined,
    );
    return { path: binding.key, how: binding.how };
  }

  private async read(context: AgentContext): Promise<AgentSignals> {
    const { pane, processStart } = context;
    const home = codexHome(await context.env());
    const bound = await this.bind(context, home);
    const path = bound.path;
    const log = path ? await this.rollouts.read(path) : undefined;
    // A turn started before this process belongs to an earlier run (`codex resume`).
    const { fresh, state, detail } = freshLog(log, processStart, bound.how, LOG_WORDS);
    const title = codexTitleSignal(pane.paneTitle);
    const details: string[] = [detail];
    if (title !== "none") details.push(`title: ${title}`);

    let turn: AgentSignals["turn"] = state?.turn ?? "none";
    let prompt: AgentSignals["prompt"];
    let screenLimit: LimitReached | undefined;
    const pending = (state?.pendingCalls.length ?? 0) > 0;
    const legacyOpen = state !== undefined && !state.taskEvents && turn === "active";
    if (title === "approval" || !state || (turn === "active" && pending) || legacyOpen) {
      const screen = await context.screen(fresh?.reread ? 0 : undefined);
      prompt = codexScreenPrompt(screen);
      screenLimit = codexLimitReached(screen);
      if (!prompt && title === "approval") prompt = { kind: PromptKind.APPROVAL, text: "Action Required" };
      const read = prompt ? readCodexPrompt(await wholeScreen(context)) : undefined;
      if (prompt && read) prompt = { ...prompt, pending: toPendingPrompt(this.name, read) };
      const working = codexScreenWorking(screen) || title === "working";
      if (!state && working) turn = "active";
      if (legacyOpen && !working && !pending) turn = "completed";
      details.push(prompt ? "prompt on screen" : working ? "working on screen" : "screen quiet");
    }
    const usage = path && fresh ? await this.usage.read(path) : undefined;
    return {
      usage: usage ? codexUsage(usage.state, screenLimit) : undefined,
      turn,
      completionId: turn !== "completed" ? "" : legacyOpen ? (state?.lastUserTurn ?? "") : (state?.completionId ?? ""),
      replyExcerpt: turn === "completed" ? replyExcerpt(state?.replyText ?? "") : "",
      prompt,
      detail: details.join("; "),
      lastActivity: fresh ? new Date(fresh.mtimeMs) : undefined,
      lastUserTurn: state?.lastUserTurn ?? "",
      lastUserTurnJoined: state?.lastUserTurnJoined ?? false,
      hasNativeLog: true,
      chatLog: path ? { path, session: "" } : undefined,
      chatLogDetail: bound.how,
      statePaths: [path ? dirname(path) : (rolloutFolders(home, processStart)[0] ?? join(home, "sessions"))],
    };
  }
}
