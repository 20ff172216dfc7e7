import { basename } from "node:path";
import { Cli } from "../../../../gen/staragent/v1/session_pb.js";
import {
  type AgentContext,
  type AgentModule,
  type AgentSignals,
  observeSafely,
  PROCESS_START_SLACK_MS,
  wholeScreen,
} from "../agent.js";
import { bindProcessLog, freshLog, logSignals } from "../bound-log.js";
import { LogBinder } from "../log-binding.js";
import { LogFollower } from "../log-follower.js";
import type { ProcessInfo } from "../process-table.js";
import { optionValue, programNames } from "../program.js";
import { toPendingPrompt } from "../prompt.js";
import { TotalsFollower } from "../usage/totals-follower.js";
import { piChatParser } from "./chat-parser.js";
import { PiConversations } from "./pi-conversations.js";
import { PiHistory } from "./pi-history.js";
import { piAgentDir, piSessionById, piSessionFiles, piSessionsFolder } from "./pi-home.js";
import { piUsage, piUsageReducer } from "./pi-usage.js";
import { readPiPrompt } from "./prompt-reader.js";
import { piScreenPrompt, piScreenWorking } from "./screen.js";
import { piSessionReducer } from "./session-log.js";

/** The names pi runs as: `pi` (npm's bin, also under node or npx). */
const PROGRAM_NAMES: ReadonlySet<string> = new Set(["pi"]);
/** The npm package's entry script (`node …/@mariozechner/pi-coding-agent/dist/cli.js`). */
const PACKAGE_SCRIPT = /\/@mariozechner\/pi-coding-agent\/dist\/cli\.js$/;
/** How `status_detail` names pi's session files. */
const LOG_WORDS = {
  log: "session",
  none: "no session file yet, pi writes it once the first reply arrived",
  name: (path: string) => basename(path),
};

/**
 * pi (`@mariozechner/pi-coding-agent`): recognised by its argv (`pi`, the package's `dist/cli.js`
 * under node, also through npx or a wrapper); bound to its session file (`~/.pi/agent/sessions/
 * --<cwd>--/<time>_<id>.jsonl`) by `--session`, else by the folder's files written since it started
 * and the prompts on screen (several in one folder each get their own); status from the file read
 * backward (an assistant message's `stopReason`: `stop` ends the turn, `aborted` is Escape), and from
 * the screen for the first turn (pi writes the file only once the first reply arrived) and for an
 * extension's dialog (pi has no approval of its own; its permission gate asks through one).
 */
export class PiModule implements AgentModule {
  readonly cli = Cli.PI;
  readonly name = "pi";
  readonly scope = "tree";
  readonly adoptable = true;
  readonly chatParser = piChatParser;
  readonly history = new PiHistory();
  readonly conversations = new PiConversations();
  /** Its own interrupt key: one Escape aborts a running turn (docs/compat.md). */
  readonly interrupt = { keys: ["Escape"] };
  private readonly logs = new LogFollower(piSessionReducer);
  private readonly binder = new LogBinder();
  private readonly usage = new TotalsFollower(piUsageReducer);

  readPrompt(screen: string) {
    return readPiPrompt(screen);
  }

  recognises(process: ProcessInfo): boolean {
    const { names, script } = programNames(process);
    for (const name of PROGRAM_NAMES) if (names.has(name)) return true;
    return PACKAGE_SCRIPT.test(script);
  }

  observe(context: AgentContext): Promise<AgentSignals> {
    return observeSafely("pi", () => this.read(context));
  }

  /** The session file of the pane's process, and how it was bound. */
  private async bind(context: AgentContext, folder: string): Promise<{ path: string | undefined; how: string }> {
    const { process, processStart } = context;
    // `--session <path|id>` names the session (a part of the id is enough for pi).
    const namedId = optionValue(process.argv, ["--session"]);
    const named = namedId ? await piSessionById(folder, namedId) : undefined;
    const files = named ? [] : await piSessionFiles(folder, processStart.getTime() - PROCESS_START_SLACK_MS);
    const binding = await bindProcessLog(
      this.binder,
      context,
      files.map((f) => ({ key: f.path, updatedMs: f.mtimeMs })),
      async (f) => (await this.logs.read(f.key))?.state.prompt,
      named ? { key: named, how: "its --session argument names the session" } : undefined,
    );
    return { path: binding.key, how: binding.how };
  }

  private async read(context: AgentContext): Promise<AgentSignals> {
    const { pane, processStart } = context;
    const folder = piSessionsFolder(piAgentDir(await context.env()), pane.paneCurrentPath);
    const bound = await this.bind(context, folder);
    const path = bound.path;
    const log = path ? await this.logs.read(path) : undefined;
    // A turn opened before this process belongs to an earlier run (`pi --continue`): its status is not this
    // run's, but its usage is the conversation's so far.
    const { fresh, state, detail } = freshLog(log, processStart, bound.how, LOG_WORDS);
    const details: string[] = [detail];
    let turn: AgentSignals["turn"] = state?.turn ?? "none";
    // The screen is looked at while no turn is logged (the first turn runs before the file exists)
    // or one runs (an extension's dialog is written nowhere), not for a settled session.
    const look = !state || turn === "active";
    const screen = look ? await context.screen(fresh?.reread ? 0 : undefined) : "";
    let prompt = look ? piScreenPrompt(screen) : undefined;
    if (prompt) {
      const read = readPiPrompt(await wholeScreen(context));
      if (read) prompt = { ...prompt, pending: toPendingPrompt(this.name, read) };
      details.push("dialog on screen");
    } else if (state?.toolPending) {
      details.push("a tool runs");
    }
    if (!state && piScreenWorking(screen)) {
      turn = "active";
      details.push("working on screen");
    }
    const totals = fresh && path ? await this.usage.read(path) : undefined;
    const usage = totals ? piUsage(totals.state) : undefined;
    return logSignals({ fresh, state, turn, prompt, details, usage, ...bound, statePath: folder });
  }
}
