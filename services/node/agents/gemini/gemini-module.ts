import { basename } from "node:path";
import { ChatRole, Cli } from "../../../../gen/staragent/v1/session_pb.js";
import {
  type AgentContext,
  type AgentModule,
  type AgentSignals,
  observeSafely,
  PROCESS_START_SLACK_MS,
} from "../agent.js";
import { bindProcessLog, freshLog, logSignals } from "../bound-log.js";
import { LogBinder } from "../log-binding.js";
import type { ProcessInfo } from "../process-table.js";
import { optionValue, programNames } from "../program.js";
import { logTurn, TitleTurn } from "../title-turn.js";
import { geminiChatParser } from "./chat-parser.js";
import { GeminiConversations } from "./gemini-conversations.js";
import { GeminiHistory } from "./gemini-history.js";
import { geminiUsage } from "./gemini-usage.js";
import { readGeminiPrompt } from "./prompt-reader.js";
import { geminiScreenPrompt, geminiScreenWorking, geminiTitleSignal } from "./screen.js";
import { chatsFolder, geminiHome, sessionFileById, sessionFiles } from "./session-finder.js";
import { GeminiSessionLog } from "./session-log.js";

/** True when the newest turn on screen (after the last prompt) shows `ℹ Request cancelled.`. */
function cancelledOnScreen(screen: string): boolean {
  const messages = geminiChatParser.parse(screen.split("\n"));
  const lastPrompt = messages.findLastIndex((m) => m.role === ChatRole.USER);
  return messages.slice(lastPrompt + 1).some((m) => m.role === ChatRole.SYSTEM && m.text === REQUEST_CANCELLED);
}

/** The notice of a cancelled turn, in the log and on screen. */
const REQUEST_CANCELLED = "Request cancelled.";
/** The quiet before an Enter submits: Gemini CLI's 30 ms, with room for the pane's scheduling. */
const GEMINI_SUBMIT_QUIET_MS = 100;
/** How status_detail names Gemini CLI's logs. */
const LOG_WORDS = { log: "session", none: "no session file", name: (path: string) => basename(path) };
/** The script names Gemini CLI runs as under node (`bundle/gemini.js`, npx's `.bin/gemini`). */
const SCRIPT_NAMES: ReadonlySet<string> = new Set(["gemini", "gemini.js"]);

/**
 * Gemini CLI (`@google/gemini-cli`): recognised by its argv (`gemini`, `node …/bundle/gemini.js`, also
 * under npx); status from its session file read forward and followed (`~/.gemini/tmp/<project>/chats/
 * session-*.jsonl`), which has no end-of-turn record: a reply with text ends the turn unless the pane
 * title (`✦ Working…`, `✋ Action Required`) or the screen says the turn goes on (docs/status.md).
 * Approvals come from the screen: Gemini CLI writes a tool call only once it is answered.
 */
export class GeminiModule implements AgentModule {
  readonly cli = Cli.GEMINI;
  readonly name = "gemini";
  readonly scope = "tree";
  readonly adoptable = true;
  readonly chatParser = geminiChatParser;
  /** Gemini CLI takes an Enter within 30 ms of another key as a line break (its `FAST_RETURN_TIMEOUT`). */
  readonly submitQuietMs = GEMINI_SUBMIT_QUIET_MS;
  /** Its own interrupt key: one Escape cancels a running turn (docs/compat.md). */
  readonly interrupt = { keys: ["Escape"] };
  private readonly log = new GeminiSessionLog();
  readonly history = new GeminiHistory(this.log);
  readonly conversations = new GeminiConversations();
  private readonly binder = new LogBinder();
  private readonly titleTurn = new TitleTurn({
    name: this.name,
    readPrompt: readGeminiPrompt,
    screenPrompt: geminiScreenPrompt,
    screenWorking: geminiScreenWorking,
    screenCancelled: cancelledOnScreen,
  });

  readPrompt(screen: string) {
    return readGeminiPrompt(screen);
  }

  recognises(process: ProcessInfo): boolean {
    const { names } = programNames(process);
    for (const name of SCRIPT_NAMES) if (names.has(name)) return true;
    return false;
  }

  observe(context: AgentContext): Promise<AgentSignals> {
    return observeSafely("Gemini CLI", () => this.read(context));
  }

  /** The session file of the pane's process, and how it was bound. */
  private async bind(
    context: AgentContext,
    folder: string | undefined,
  ): Promise<{ path: string | undefined; how: string }> {
    const { process, processStart } = context;
    if (!folder) return { path: undefined, how: "Gemini CLI keeps no chats folder for this directory yet" };
    // `--resume <uuid>` and `--session-id <uuid>` name the session (`--resume latest` does not).
    const namedId = optionValue(process.argv, ["--resume", "-r"]) || optionValue(process.argv, ["--session-id"]);
    const named = namedId ? await sessionFileById(folder, namedId) : undefined;
    const files = named ? [] : await sessionFiles(folder, processStart.getTime() - PROCESS_START_SLACK_MS);
    const binding = await bindProcessLog(
      this.binder,
      context,
      files.map((f) => ({ key: f.path, updatedMs: f.mtimeMs })),
      async (f) => (await this.log.read(f.key))?.state.prompt,
      named ? { key: named, how: "its --resume or --session-id argument names the session" } : undefined,
    );
    return { path: binding.key, how: binding.how };
  }

  private async read(context: AgentContext): Promise<AgentSignals> {
    const { pane, processStart } = context;
    const home = geminiHome(await context.env());
    const folder = await chatsFolder(home, pane.paneCurrentPath);
    const bound = await this.bind(context, folder);
    const session = bound.path ? await this.log.read(bound.path) : undefined;
    // A turn opened before this process belongs to an earlier run (`gemini --resume`): its status is not this
    // run's, but its usage is the conversation's so far.
    const { fresh, state, detail } = freshLog(session, processStart, bound.how, LOG_WORDS);
    const title = geminiTitleSignal(pane.paneTitle);
    const details: string[] = [detail];
    if (title !== "none") details.push(`title: ${title}`);

    const settled = await this.titleTurn.settle(context, title, logTurn(fresh, state, state?.toolAsked ?? false));
    const { turn, prompt } = settled;
    details.push(...settled.details);
    const usage = fresh ? geminiUsage(fresh.usage) : undefined;
    return logSignals({ fresh, state, turn, prompt, details, usage, ...bound, statePath: folder ?? home });
  }
}
