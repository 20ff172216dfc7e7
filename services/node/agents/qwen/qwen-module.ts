import { basename, dirname } from "node:path";
import { Cli } from "../../../../gen/staragent/v1/session_pb.js";
import {
  type AgentContext,
  type AgentModule,
  type AgentSignals,
  observeSafely,
  PROCESS_START_SLACK_MS,
} from "../agent.js";
import { bindProcessLog, freshLog, isProcessOrChild, logSignals } from "../bound-log.js";
import { LogBinder } from "../log-binding.js";
import { LogFollower } from "../log-follower.js";
import type { ProcessInfo } from "../process-table.js";
import { optionValue, programNames } from "../program.js";
import { logTurn, TitleTurn } from "../title-turn.js";
import { TotalsFollower } from "../usage/totals-follower.js";
import { qwenChatParser } from "./chat-parser.js";
import { readQwenPrompt } from "./prompt-reader.js";
import { QwenConversations } from "./qwen-conversations.js";
import { QwenHistory } from "./qwen-history.js";
import { qwenChatsFolder, qwenHome, qwenSessionFiles } from "./qwen-home.js";
import { qwenScreenCancelled, qwenScreenPrompt, qwenScreenWorking, qwenTitleSignal } from "./screen.js";
import { qwenSessionReducer } from "./session.js";
import { qwenUsage, qwenUsageReducer } from "./usage.js";

/** How status_detail names Qwen Code's logs. */
const LOG_WORDS = { log: "session", none: "no session log", name: (path: string) => basename(path) };
/** The names Qwen Code runs as (`qwen`, `node …/cli.js` of the package, npx's `.bin/qwen`). */
const PROGRAM_NAMES: ReadonlySet<string> = new Set(["qwen"]);
/** The script of the npm package, when started as `node …/@qwen-code/qwen-code/cli.js`. */
const PACKAGE_SCRIPT = /\/@qwen-code\/qwen-code\/cli(?:-entry)?\.js$/;

/**
 * Qwen Code (`@qwen-code/qwen-code`): recognised by its argv (`qwen`, the package's `cli.js` under
 * node, also through npx); bound to its session log by the pid in the log's `<id>.runtime.json`, else
 * by the folder's logs and the prompts on screen; status from the log read backward, which has no
 * end-of-turn record (a reply with text ends the turn, docs/status.md), the pane title (`◐︎ Qwen`
 * working, `✳︎ Qwen` asking) and the screen for dialogs and a turn cancelled before its reply.
 */
export class QwenModule implements AgentModule {
  readonly cli = Cli.QWEN;
  readonly name = "qwen";
  readonly scope = "tree";
  readonly adoptable = true;
  readonly chatParser = qwenChatParser;
  /** Its own interrupt key: one Escape cancels a running turn (docs/compat.md). */
  readonly interrupt = { keys: ["Escape"] };
  readonly history = new QwenHistory();
  readonly conversations = new QwenConversations();
  private readonly logs = new LogFollower(qwenSessionReducer);
  private readonly usage = new TotalsFollower(qwenUsageReducer);
  private readonly binder = new LogBinder();
  private readonly titleTurn = new TitleTurn({
    name: this.name,
    readPrompt: readQwenPrompt,
    screenPrompt: qwenScreenPrompt,
    screenWorking: qwenScreenWorking,
    screenCancelled: qwenScreenCancelled,
  });

  readPrompt(screen: string) {
    return readQwenPrompt(screen);
  }

  recognises(process: ProcessInfo): boolean {
    const { names, script } = programNames(process);
    for (const name of PROGRAM_NAMES) if (names.has(name)) return true;
    return PACKAGE_SCRIPT.test(script);
  }

  observe(context: AgentContext): Promise<AgentSignals> {
    return observeSafely("Qwen Code", () => this.read(context));
  }

  /** The session log of the pane's process, and how it was bound. */
  private async bind(context: AgentContext, folder: string): Promise<{ path: string | undefined; how: string }> {
    const { process, processStart } = context;
    const files = await qwenSessionFiles(folder, processStart.getTime() - PROCESS_START_SLACK_MS);
    // The runtime file names the pid of the process writing the log (the CLI, or a child it started).
    let explicit: { key: string; how: string } | undefined;
    for (const file of files) {
      if (file.pid !== 0 && (await isProcessOrChild(file.pid, process))) {
        explicit = { key: file.path, how: "its runtime file names this process" };
      }
    }
    const resumeId = optionValue(process.argv, ["--resume", "-r", "--session-id"]);
    const named = resumeId ? files.find((f) => basename(f.path, ".jsonl") === resumeId) : undefined;
    if (!explicit && named) explicit = { key: named.path, how: "its --resume argument names the session" };
    const binding = await bindProcessLog(
      this.binder,
      context,
      files.map((f) => ({ key: f.path, updatedMs: f.mtimeMs })),
      async (f) => (await this.logs.read(f.key))?.state.prompt,
      explicit,
    );
    return { path: binding.key, how: binding.how };
  }

  private async read(context: AgentContext): Promise<AgentSignals> {
    const { pane, processStart } = context;
    const home = qwenHome(await context.env());
    const folder = qwenChatsFolder(home, pane.paneCurrentPath);
    const bound = await this.bind(context, folder);
    const log = bound.path ? await this.logs.read(bound.path) : undefined;
    const { fresh, state, detail } = freshLog(log, processStart, bound.how, LOG_WORDS);
    const title = qwenTitleSignal(pane.paneTitle);
    const details: string[] = [detail];
    if (title !== "none") details.push(`title: ${title}`);

    const settled = await this.titleTurn.settle(context, title, logTurn(fresh, state, state?.callPending ?? false));
    const { turn, prompt } = settled;
    details.push(...settled.details);
    const totals = fresh && bound.path ? await this.usage.read(bound.path) : undefined;
    const usage = totals ? qwenUsage(totals.state) : undefined;
    const statePath = bound.path ? dirname(bound.path) : folder;
    return logSignals({ fresh, state, turn, prompt, details, usage, ...bound, statePath });
  }
}
