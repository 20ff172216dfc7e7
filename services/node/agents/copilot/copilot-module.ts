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
import { bindProcessLog, freshLog, isProcessOrChild, logSignals } from "../bound-log.js";
import { LogBinder } from "../log-binding.js";
import { LogFollower } from "../log-follower.js";
import type { ProcessInfo } from "../process-table.js";
import { optionValue, programNames } from "../program.js";
import { toPendingPrompt } from "../prompt.js";
import { TotalsFollower } from "../usage/totals-follower.js";
import { copilotChatParser } from "./chat-parser.js";
import { CopilotConversations } from "./copilot-conversations.js";
import { copilotHome, copilotSessions, sessionStateFolder } from "./copilot-home.js";
import { copilotEventsReducer } from "./events.js";
import { CopilotEventsHistory } from "./events-history.js";
import { readCopilotPrompt } from "./prompt-reader.js";
import { copilotScreenPrompt, copilotScreenWorking } from "./screen.js";
import { copilotUsage, copilotUsageReducer } from "./usage.js";

/**
 * How long after an interrupt was logged the screen is still looked at: the CLI shows `○ Cancelling`
 * for a moment after it wrote the `abort` (longer under load), and takes no prompt meanwhile.
 */
const CANCELLING_MS = 10_000;
/** How status_detail names Copilot CLI's logs (each session's `events.jsonl`, by its folder). */
const LOG_WORDS = { log: "session", none: "no session log", name: (path: string) => basename(dirname(path)) };
/** The names Copilot CLI runs as: `copilot` (npm's bin, the native binary), npx's loader script. */
const PROGRAM_NAMES: ReadonlySet<string> = new Set(["copilot"]);
/** The npm package's loader (`node …/@github/copilot/npm-loader.js`, as npx starts it). */
const PACKAGE_SCRIPT = /\/@github\/copilot\/(?:npm-loader|index)\.js$/;
/** The native build the loader starts (`…/@github/copilot-linux-x64/copilot`). */
const NATIVE_BINARY = /\/@github\/copilot-[a-z0-9-]+\/copilot$/;

/**
 * GitHub Copilot CLI (`@github/copilot`): recognised by its argv (`copilot`, npm's loader under node,
 * the native binary it starts, also through npx); bound to its session's `events.jsonl` by the
 * `inuse.<pid>.lock` in the session's folder, else by the folder's sessions and the prompts on screen;
 * status from the event log read backward (`assistant.turn_end` ends a turn, `abort` interrupts it),
 * and from the screen for dialogs (approval, folder trust) and the working footer. Escape Escape before
 * any output rewinds the turn out of the log, which then says so (events.ts).
 */
export class CopilotModule implements AgentModule {
  readonly cli = Cli.COPILOT;
  readonly name = "copilot";
  readonly scope = "tree";
  readonly adoptable = true;
  readonly chatParser = copilotChatParser;
  readonly history = new CopilotEventsHistory();
  readonly conversations = new CopilotConversations();
  private readonly logs = new LogFollower(copilotEventsReducer);
  private readonly binder = new LogBinder();
  private readonly usage = new TotalsFollower(copilotUsageReducer);

  readPrompt(screen: string) {
    return readCopilotPrompt(screen);
  }

  recognises(process: ProcessInfo): boolean {
    const { names, script } = programNames(process);
    for (const name of PROGRAM_NAMES) if (names.has(name)) return true;
    return PACKAGE_SCRIPT.test(script) || NATIVE_BINARY.test(process.argv[0] ?? "");
  }

  observe(context: AgentContext): Promise<AgentSignals> {
    return observeSafely("Copilot CLI", () => this.read(context));
  }

  /** The session log of the pane's process, and how it was bound. */
  private async bind(context: AgentContext, home: string): Promise<{ path: string | undefined; how: string }> {
    const { process, pane, processStart } = context;
    const sessions = await copilotSessions(home, pane.paneCurrentPath, processStart.getTime() - PROCESS_START_SLACK_MS);
    // The lock names the pid of the process that has the session open: the CLI or the native
    // binary its npm loader started.
    let explicit: { key: string; how: string } | undefined;
    for (const session of sessions) {
      for (const pid of session.pids) {
        if (await isProcessOrChild(pid, process))
          explicit = { key: session.path, how: "its session's lock names this process" };
      }
      if (explicit) break;
    }
    const resumeId = optionValue(process.argv, ["--resume"]);
    const named = resumeId ? sessions.find((s) => s.id === resumeId) : undefined;
    if (!explicit && named) explicit = { key: named.path, how: "its --resume argument names the session" };
    const binding = await bindProcessLog(
      this.binder,
      context,
      sessions.map((s) => ({ key: s.path, updatedMs: s.mtimeMs })),
      async (s) => (await this.logs.read(s.key))?.state.prompt,
      explicit,
    );
    return { path: binding.key, how: binding.how };
  }

  private async read(context: AgentContext): Promise<AgentSignals> {
    const { processStart } = context;
    const home = copilotHome(await context.env());
    const bound = await this.bind(context, home);
    const path = bound.path;
    const log = path ? await this.logs.read(path) : undefined;
    // A turn opened before this process belongs to an earlier run (`copilot --resume`): its status is not this
    // run's, but its usage is the conversation's so far.
    const { fresh, state, detail } = freshLog(log, processStart, bound.how, LOG_WORDS);
    const details: string[] = [detail];
    let turn: AgentSignals["turn"] = state?.turn ?? "none";
    // Dialogs are on screen only (folder trust before any log; an approval also as permission.requested):
    // looked at while no turn is logged or one runs, not for a settled session.
    // Just after an interrupt the CLI is still `Cancelling` (Enter typed then is lost): that is busy.
    const justInterrupted = turn === "interrupted" && fresh !== undefined && Date.now() - fresh.mtimeMs < CANCELLING_MS;
    const look = !state || turn === "active" || justInterrupted;
    const screen = look ? await context.screen(fresh?.reread ? 0 : undefined) : "";
    let prompt = look ? copilotScreenPrompt(screen) : undefined;
    if (prompt) {
      const read = readCopilotPrompt(await wholeScreen(context));
      if (read) prompt = { ...prompt, pending: toPendingPrompt(this.name, read) };
      details.push("dialog on screen");
    } else if (state?.permissionPending) {
      details.push("permission requested, no dialog on screen yet");
    }
    if ((!state || justInterrupted) && copilotScreenWorking(screen)) {
      turn = "active";
      details.push(justInterrupted ? "interrupted, still cancelling on screen" : "working on screen");
    }
    const totals = fresh && path ? await this.usage.read(path) : undefined;
    const usage = totals ? copilotUsage(totals.state) : undefined;
    const statePath = path ? dirname(path) : sessionStateFolder(home);
    return logSignals({ fresh, state, turn, prompt, details, usage, ...bound, statePath });
  }
}
