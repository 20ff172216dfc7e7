import { realpath } from "node:fs/promises";
import { dirname, join } from "node:path";
import { Cli } from "../../../../gen/staragent/v1/session_pb.js";
import { type AgentContext, type AgentModule, type AgentSignals, observeSafely, writtenSince } from "../agent.js";
import type { ProcessInfo } from "../process-table.js";
import { programNames } from "../program.js";
import { OpencodeDb } from "./opencode-db.js";
import { opencodeScreenPrompt, opencodeScreenWorking } from "./screen.js";

/** opencode's database of a process: `$XDG_DATA_HOME/opencode/opencode.db`, else under `$HOME/.local/share`. */
export function opencodeDbPath(env: Readonly<Record<string, string | undefined>>): string {
  const dataHome = env.XDG_DATA_HOME || join(env.HOME || "/", ".local", "share");
  return join(dataHome, "opencode", "opencode.db");
}

/**
 * opencode: recognised by its argv; status from its SQLite state (read-only) for the newest root
 * session of the pane's cwd, and the pane bottom for the permission dialog, held in memory only.
 */
export class OpencodeModule implements AgentModule {
  readonly cli = Cli.OPENCODE;
  readonly name = "opencode";
  private readonly db = new OpencodeDb();

  recognises(process: ProcessInfo): boolean {
    return programNames(process).names.has("opencode");
  }

  observe(context: AgentContext): Promise<AgentSignals> {
    return observeSafely("opencode", () => this.read(context));
  }

  private async read(context: AgentContext): Promise<AgentSignals> {
    const { pane, processStart } = context;
    const path = opencodeDbPath(await context.env());
    const cwd = await realpath(pane.paneCurrentPath).catch(() => pane.paneCurrentPath);
    const read = await this.db.read(path, cwd);
    const state = read && read.sessionId !== "" && writtenSince(read.updatedMs, processStart) ? read : undefined;
    const details = [state ? `opencode.db session ${state.sessionId}: ${state.decidedBy}` : "no session yet"];
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
      lastActivity: state ? new Date(state.updatedMs) : undefined,
      lastUserTurn: state?.userMessageId ?? "",
      hasNativeLog: true,
      statePaths: [dirname(path)],
    };
  }
}
