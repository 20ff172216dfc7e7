import { basename, dirname } from "node:path";
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
import { droidChatParser } from "./chat-parser.js";
import { DroidConversations } from "./droid-conversations.js";
import { DroidHistory } from "./droid-history.js";
import { droidSessionFiles, droidSessionsFolder, factoryHome } from "./droid-home.js";
import { readDroidPrompt } from "./prompt-reader.js";
import { droidScreenPrompt, droidScreenWorking } from "./screen.js";
import { droidSessionReducer } from "./session.js";
import { readDroidUsage } from "./usage.js";

/**
 * How long after an interrupt was logged the screen is still looked at: droid shows `Cancelling
 * tools...  (Please wait)` for a moment after it wrote the outcome, and takes no prompt meanwhile.
 */
const CANCELLING_MS = 10_000;
/** The names Factory droid runs as: `droid` (npm's bin, the platform binary, its `droid exec` engine). */
const PROGRAM_NAMES: ReadonlySet<string> = new Set(["droid"]);
/** The npm package's binaries: `…/@factory/cli/bin/droid` or the platform package's `…/cli-linux-x64/bin/droid`. */
const PACKAGE_BINARY = /\/@factory\/cli(?:-[a-z0-9-]+)?\/bin\/droid$/;
/** How `status_detail` names droid's session logs. */
const LOG_WORDS = { log: "session", none: "no session log", name: (path: string) => basename(path, ".jsonl") };

/**
 * Factory droid (`@factory/cli`): recognised by its argv (`droid`, the package's binary, also
 * through npx or a wrapper); bound to its session's `<id>.jsonl` under `~/.factory/sessions/<cwd>/`
 * by `--resume <id>` where given, else by the folder's sessions and the prompts on screen (droid
 * names no process in its files); status from the log read backward (`agent_turn_outcome` ends a
 * turn), and from the screen for dialogs (approval, folder trust) and the working line.
 */
export class DroidModule implements AgentModule {
  readonly cli = Cli.DROID;
  readonly name = "droid";
  readonly scope = "tree";
  readonly adoptable = true;
  readonly chatParser = droidChatParser;
  /** Its own interrupt key: one Escape cancels a running turn (docs/compat.md). */
  readonly interrupt = { keys: ["Escape"] };
  readonly history = new DroidHistory();
  readonly conversations = new DroidConversations();
  private readonly logs = new LogFollower(droidSessionReducer);
  private readonly binder = new LogBinder();

  readPrompt(screen: string) {
    return readDroidPrompt(screen);
  }

  recognises(process: ProcessInfo): boolean {
    const { names, script } = programNames(process);
    for (const name of PROGRAM_NAMES) if (names.has(name)) return true;
    return PACKAGE_BINARY.test(script) || PACKAGE_BINARY.test(process.argv[0] ?? "");
  }

  observe(context: AgentContext): Promise<AgentSignals> {
    return observeSafely("Factory droid", () => this.read(context));
  }

  /** The session log of the pane's process, and how it was bound. */
  private async bind(context: AgentContext, folder: string): Promise<{ path: string | undefined; how: string }> {
    const { process, processStart } = context;
    const files = await droidSessionFiles(folder, processStart.getTime() - PROCESS_START_SLACK_MS);
    const resumeId = optionValue(process.argv, ["--resume", "-r"]);
    const named = resumeId ? files.find((f) => f.id === resumeId) : undefined;
    const explicit = named ? { key: named.path, how: "its --resume argument names the session" } : undefined;
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
    const folder = droidSessionsFolder(factoryHome(await context.env()), pane.paneCurrentPath);
    const bound = await this.bind(context, folder);
    const path = bound.path;
    const log = path ? await this.logs.read(path) : undefined;
    // A turn opened before this process belongs to an earlier run (`droid --resume`): its status is not this
    // run's, but its usage is the conversation's so far.
    const { fresh, state, detail } = freshLog(log, processStart, bound.how, LOG_WORDS);
    const details: string[] = [detail];
    let turn: AgentSignals["turn"] = state?.turn ?? "none";
    // Dialogs are on screen only: looked at while no turn is logged or one runs, not once settled.
    const justInterrupted = turn === "interrupted" && fresh !== undefined && Date.now() - fresh.mtimeMs < CANCELLING_MS;
    const look = !state || turn === "active" || justInterrupted;
    const screen = look ? await context.screen(fresh?.reread ? 0 : undefined) : "";
    let prompt = look ? droidScreenPrompt(screen) : undefined;
    if (prompt) {
      const read = readDroidPrompt(await wholeScreen(context));
      if (read) prompt = { ...prompt, pending: toPendingPrompt(this.name, read) };
      details.push("dialog on screen");
    } else if (state?.callPending) {
      details.push("tool call without its result, no dialog on screen");
    }
    if ((!state || justInterrupted) && !prompt && droidScreenWorking(screen)) {
      turn = "active";
      details.push(justInterrupted ? "interrupted, still cancelling on screen" : "working on screen");
    }
    const usage = fresh && path ? await readDroidUsage(path) : undefined;
    return logSignals({
      fresh,
      state,
      turn,
      prompt,
      details,
      usage,
      ...bound,
      statePath: path ? dirname(path) : folder,
    });
  }
}
