import { realpath } from "node:fs/promises";
import { dirname } from "node:path";
import { Cli } from "../../../../gen/staragent/v1/session_pb.js";
import type { ChatParser } from "../../chat/chat-parser.js";
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
import type { ProcessInfo } from "../process-table.js";
import { optionValue, programNames } from "../program.js";
import { type ScreenPrompt, toPendingPrompt } from "../prompt.js";
import { replyExcerpt } from "../reply-excerpt.js";
import { opencodeChatParser } from "./chat-parser.js";
import { OpencodeConversations } from "./opencode-conversations.js";
import { OpencodeDb, opencodeDbPath } from "./opencode-db.js";
import { readOpencodePrompt } from "./prompt-reader.js";
import { opencodeScreenPrompt, opencodeScreenWorking } from "./screen.js";
import { OpencodeSessionHistory } from "./session-history.js";

/**
 * What a CLI built on opencode's core (Kilo CLI) changes of this module: its names, where its
 * database is, and how its permission dialog is answered. opencode's own are the defaults.
 */
export interface OpencodeFlavour {
  readonly cli: Cli;
  readonly name: string;
  /** The program names its process goes by. */
  readonly programs: readonly string[];
  dbPath(env: Readonly<Record<string, string | undefined>>): string;
  /** The prompt signal of the pane's bottom, and the whole prompt with its keys (AgentModule.readPrompt). */
  screenPrompt(screen: string): PromptSignal | undefined;
  readPrompt(screen: string): ScreenPrompt | undefined;
  readonly chatParser: ChatParser;
  newConversations(): OpencodeConversations;
  /**
   * True when its permission dialog may be drawn before the tool's part is in the database (Kilo
   * CLI 7.7 does this), so the screen is read throughout an active turn, not only while a tool runs.
   */
  readonly asksBeforeToolPart: boolean;
}

const OPENCODE: OpencodeFlavour = {
  cli: Cli.OPENCODE,
  name: "opencode",
  programs: ["opencode"],
  dbPath: opencodeDbPath,
  screenPrompt: opencodeScreenPrompt,
  readPrompt: readOpencodePrompt,
  chatParser: opencodeChatParser,
  newConversations: () => new OpencodeConversations(),
  asksBeforeToolPart: false,
};

/**
 * opencode: recognised by its argv; status from its SQLite state (read-only) for the pane's own root
 * session (the folder's newest when it is the only opencode there, else the one whose newest prompt
 * its pane shows: `LogBinder`), and the pane bottom for the permission dialog, held in memory only.
 */
export class OpencodeModule implements AgentModule {
  readonly cli: Cli;
  readonly name: string;

  readPrompt(screen: string) {
    return this.flavour.readPrompt(screen);
  }
  readonly scope = "tree";
  readonly adoptable = true;
  /** Its own interrupt key (docs/compat.md). */
  readonly interrupt = { keys: ["Escape"], confirm: "esc again to interrupt" };
  readonly chatParser: ChatParser;
  readonly history: OpencodeSessionHistory;
  readonly conversations: OpencodeConversations;
  private readonly db = new OpencodeDb();
  private readonly binder = new LogBinder();

  constructor(private readonly flavour: OpencodeFlavour = OPENCODE) {
    this.cli = flavour.cli;
    this.name = flavour.name;
    this.history = new OpencodeSessionHistory(flavour.cli, flavour.name);
    this.chatParser = flavour.chatParser;
    this.conversations = flavour.newConversations();
  }

  recognises(process: ProcessInfo): boolean {
    const { names } = programNames(process);
    return this.flavour.programs.some((p) => names.has(p));
  }

  observe(context: AgentContext): Promise<AgentSignals> {
    return observeSafely(this.name, () => this.read(context));
  }

  /** Closes the database connections its status and chat reads keep open. */
  close(): void {
    this.db.close();
    this.history.clear();
    this.conversations.close();
  }

  /** The session of the pane's process, and how it was bound. */
  private async bind(
    context: AgentContext,
    path: string,
    cwd: string,
  ): Promise<{ id: string | undefined; how: string }> {
    const { process, processStart } = context;
    // `opencode --session <id>` names its session.
    const named = optionValue(process.argv, ["--session", "-s"]);
    const sessions = named
      ? []
      : ((await this.db.sessionsSince(path, cwd, processStart.getTime() - PROCESS_START_SLACK_MS)) ?? []);
    const binding = await bindProcessLog(
      this.binder,
      context,
      sessions.map((s) => ({ key: s.id, updatedMs: s.updatedMs })),
      (s) => this.db.newestPrompt(path, s.key),
      named ? { key: named, how: "its --session argument names it" } : undefined,
    );
    return { id: binding.key, how: binding.how };
  }

  private async read(context: AgentContext): Promise<AgentSignals> {
    const { pane, processStart } = context;
    const path = this.flavour.dbPath(await context.env());
    const cwd = await realpath(pane.paneCurrentPath).catch(() => pane.paneCurrentPath);
    const bound = await this.bind(context, path, cwd);
    const read = bound.id ? await this.db.readSession(path, bound.id) : undefined;
    const current = read && read.sessionId !== "" && writtenSince(read.updatedMs, processStart) ? read : undefined;
    // A turn opened before this process started belongs to an earlier run (`--continue`, `--session`).
    const earlier = current !== undefined && openedBeforeStart(current.userMessageAt, processStart);
    const state = earlier ? undefined : current;
    const details = [
      current
        ? `${this.name}.db session ${current.sessionId} (${bound.how}): ${earlier ? "its newest turn predates this process" : current.decidedBy}`
        : `no session (${bound.how})`,
    ];
    let turn: AgentSignals["turn"] = state?.turn ?? "none";
    let prompt: AgentSignals["prompt"];
    if (!state || (turn === "active" && (state.toolRunning || this.flavour.asksBeforeToolPart))) {
      const screen = await context.screen();
      prompt = this.flavour.screenPrompt(screen);
      const read = prompt ? this.flavour.readPrompt(await wholeScreen(context)) : undefined;
      if (prompt && read) prompt = { ...prompt, pending: toPendingPrompt(this.name, read) };
      const working = opencodeScreenWorking(screen);
      if (!state && working) turn = "active";
      details.push(prompt ? "prompt on screen" : working ? "working on screen" : "screen quiet");
    }
    // Cached with the turn read on the database's size and mtime: an unchanged database costs nothing more.
    const usage = current ? await this.db.readUsage(path, current.sessionId) : undefined;
    return {
      usage,
      turn,
      completionId: turn === "completed" ? (state?.userMessageId ?? "") : "",
      replyExcerpt: turn === "completed" ? replyExcerpt(state?.replyText ?? "") : "",
      prompt,
      detail: details.join("; "),
      lastActivity: current ? new Date(current.updatedMs) : undefined,
      lastUserTurn: state?.userMessageId ?? "",
      hasNativeLog: true,
      chatLog: bound.id ? { path, session: bound.id } : undefined,
      chatLogDetail: bound.how,
      statePaths: [dirname(path)],
    };
  }
}
