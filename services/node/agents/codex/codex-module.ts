import { basename, dirname, join } from "node:path";
import { Cli, PromptKind } from "../../../../gen/staragent/v1/session_pb.js";
import { type AgentContext, type AgentModule, type AgentSignals, observeSafely, writtenSince } from "../agent.js";
import { LogFollower } from "../log-follower.js";
import type { ProcessInfo } from "../process-table.js";
import { programNames } from "../program.js";
import { codexRolloutReducer } from "./rollout.js";
import { RolloutFinder, rolloutFolders } from "./rollout-finder.js";
import { codexScreenPrompt, codexScreenWorking, codexTitleSignal } from "./screen.js";

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
  private readonly rollouts = new LogFollower(codexRolloutReducer);
  private readonly finder = new RolloutFinder();

  recognises(process: ProcessInfo): boolean {
    const { names } = programNames(process);
    // `codex app-server` is the background daemon, never a pane's TUI.
    return (names.has("codex") || names.has("codex.js")) && !process.argv.includes("app-server");
  }

  observe(context: AgentContext): Promise<AgentSignals> {
    return observeSafely("Codex", () => this.read(context));
  }

  private async read(context: AgentContext): Promise<AgentSignals> {
    const { process, pane, processStart } = context;
    const home = codexHome(await context.env());
    const path = await this.finder.find(
      `${process.pid}:${process.startTicks}`,
      home,
      pane.paneCurrentPath,
      processStart,
    );
    const log = path ? await this.rollouts.read(path) : undefined;
    const fresh = log && writtenSince(log.mtimeMs, processStart) ? log : undefined;
    const state = fresh?.state;
    const title = codexTitleSignal(pane.paneTitle);
    const details: string[] = [fresh ? `rollout ${basename(fresh.path)}: ${fresh.state.decidedBy}` : "no rollout yet"];
    if (title !== "none") details.push(`title: ${title}`);

    let turn: AgentSignals["turn"] = state?.turn ?? "none";
    let prompt: AgentSignals["prompt"];
    const pending = (state?.pendingCalls.length ?? 0) > 0;
    const legacyOpen = state !== undefined && !state.taskEvents && turn === "active";
    if (title === "approval" || !fresh || (turn === "active" && pending) || legacyOpen) {
      const screen = await context.screen(fresh?.reread ? 0 : undefined);
      prompt = codexScreenPrompt(screen);
      if (!prompt && title === "approval") prompt = { kind: PromptKind.APPROVAL, text: "Action Required" };
      const working = codexScreenWorking(screen) || title === "working";
      if (!fresh && working) turn = "active";
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
      statePaths: [path ? dirname(path) : (rolloutFolders(home, processStart)[0] ?? join(home, "sessions"))],
    };
  }
}
