import { realpath } from "node:fs/promises";
import { dirname, join } from "node:path";
import { Cli } from "../../../../gen/staragent/v1/session_pb.js";
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
import type { ProcessInfo } from "../process-table.js";
import { optionValue, programNames } from "../program.js";
import { opencodeChatParser } from "./chat-parser.js";
import { OpencodeDb } from "./opencode-db.js";
import { opencodeScreenPrompt, opencodeScreenWorking } from "./screen.js";
import { OpencodeSessionHistory } from "./session-history.js";

/** opencode's database of a process: `$XDG_DATA_HOME/opencode/opencode.db`, else under `$HOME/.local/share`. */
export function opencodeDbPath(env: Readonly<Record<string, string | undefined>>): string {
  const dataHome = env.XDG_DATA_HOME || join(env.HOME || "/", ".local", "share");
  return join(dataHome, "opencode", "opencode.db");
}

/**
 * opencode: recognised by its argv; status from its SQLite state (read-only) for the pane's own root
 * session (the folder's newest when it is the only opencode there, else the one whose newest prompt
 * its pane shows: `LogBinder`), and the pane bottom for the permission dialog, held in memory only.
 */
export class OpencodeModule implements AgentModule {
  readonly cli = Cli.OPENCODE;
  readonly name = "opencode";
  readonly scope = "tree";
  readonly adoptable = true;
  readonly chatParser = opencodeChatParser;
  readonly history = new OpencodeSessionHistory();
  private readonly db = new OpencodeDb();
  private readonly binder = new LogBinder();

  recognises(process: ProcessInfo): boolean {
    return programNames(process).names.has("opencode");
  }

  observe(context: AgentContext): Promise<AgentSignals> {
    return observeSafely("opencode", () => this.read(context));
  }

  /** Closes the database connections its status and chat reads keep open. */
  close(): void {
    this.db.close();
    this.history.clear();
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
    const siblings = context.siblings.map(processKey);
    const sessions = named
      ? []
      : ((await this.db.sessionsSince(path, cwd, processStart.getTime() - PROCESS_START_SLACK_MS)) ?? []);
    const binding = await this.binder.bind({
      process: processKey(process),
      siblings,
      candidates: sessions.map((s) => ({ key: s.id, updatedMs: s.updatedMs, newestPrompt: s.newestPrompt })),
      explicit: named ? { key: named, how: "its --session argument names it" } : undefined,
      screen: () => context.visibleScreen(0),
    });
    return { id: binding.key, how: binding.how };
  }

  private async read(context: AgentContext): Promise<AgentSignals> {
    const { pane, processStart } = context;
    const path = opencodeDbPath(await context.env());
    const cwd = await realpath(pane.paneCurrentPath).catch(() => pane.paneCurrentPath);
    const bound = await this.bind(context, path, cwd);
    const read = bound.id ? await this.db.readSession(path, bound.id) : undefined;
    const current = read && read.sessionId !== "" && writtenSince(read.updatedMs, processStart) ? read : undefined;
    // A turn opened before this process started belongs to an earlier run (`--continue`, `--session`).
    const earlier = current !== undefined && openedBeforeStart(current.userMessageAt, processStart);
    const state = earlier ? undefined : current;
    const details = [
      current
        ? `opencode.db session ${current.sessionId} (${bound.how}): ${earlier ? "its newest turn predates this process" : current.decidedBy}`
        : `no session (${bound.how})`,
    ];
    let turn: AgentSignals["turn"] = state?.turn ?? "none";
    let prompt: AgentSignals["prompt"];
    if (!state || (turn === "active" && state.toolRunning)) {
      const screen = await context.screen();
      prompt = opencodeScreenPrompt(screen);
      const working = opencodeScreenWorking(screen);
      if (!state && working) turn = "active";
      details.push(prompt ? "prompt on screen" : working ? "working on screen" : "screen quiet");
    }
    return {
      turn,
      completionId: turn === "completed" ? (state?.userMessageId ?? "") : "",
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
