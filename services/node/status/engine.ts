import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { Cli, PromptKind, SessionStatus, StatusReason } from "../../../gen/staragent/v1/session_pb.js";
import type { AgentContext, AgentModule } from "../agents/agent.js";
import { descendants, type ProcessInfo, type ProcessTable, readProcessTable } from "../agents/process-table.js";
import type { TmuxClient } from "../tmux/client.js";
import { SYSTEM_SESSION_NAMES } from "../tmux/names.js";
import type { PaneInfo } from "../tmux/panes.js";
import type { SessionInspector, SessionObservation } from "./observation.js";
import { decideStatus } from "./precedence.js";
import { readPaneBottom } from "./screen.js";
import { isShell, programName } from "./shells.js";

/** Clock ticks per second for `/proc/<pid>/stat` start times (USER_HZ, 100 on Linux). */
const CLOCK_TICKS_PER_SECOND = 100;

/** What the status engine needs. */
export interface StatusEngineOptions {
  readonly tmux: TmuxClient;
  /** The supported CLIs, tried in order on each process below a pane. */
  readonly agents: readonly AgentModule[];
  /** The node's own environment, the fallback for a CLI process whose environment cannot be read. */
  readonly nodeEnv: Readonly<Record<string, string | undefined>>;
  /** Reads the process table; tests may point it elsewhere. */
  readonly readProcesses?: () => Promise<ProcessTable>;
}

/**
 * The status engine: finds the CLI in each session's active pane, lets its agent module read the
 * native state and the pane bottom, and applies the precedence of DESIGN.md §5.
 */
export class StatusEngine implements SessionInspector {
  private readonly readProcesses: () => Promise<ProcessTable>;
  private bootTimeMs: number | undefined;

  constructor(private readonly options: StatusEngineOptions) {
    this.readProcesses = options.readProcesses ?? (() => readProcessTable());
  }

  async inspect(
    panes: ReadonlyMap<string, PaneInfo>,
    seen: ReadonlyMap<string, string>,
  ): Promise<Map<string, SessionObservation>> {
    const table = await this.readProcesses();
    const out = new Map<string, SessionObservation>();
    await Promise.all(
      [...panes].map(async ([session, pane]) => {
        out.set(session, await this.inspectPane(pane, table, seen.get(session) ?? ""));
      }),
    );
    return out;
  }

  private async inspectPane(pane: PaneInfo, table: ProcessTable, seenId: string): Promise<SessionObservation> {
    const tree = descendants(table, pane.panePid);
    const found = this.findAgent(tree);
    const system = SYSTEM_SESSION_NAMES.has(pane.sessionName);
    if (pane.paneDead) {
      return base(
        found?.agent.cli ?? Cli.OTHER,
        SessionStatus.IDLE,
        StatusReason.PROCESS_EXITED,
        "the pane's process has exited",
        "",
      );
    }
    if (found && !system) {
      const context = this.contextFor(pane, found.process);
      const signals = await found.agent.observe(context);
      const { status, reason } = decideStatus(signals, seenId);
      return {
        cli: found.agent.cli,
        status,
        reason,
        prompt: signals.prompt?.text ?? "",
        promptKind: signals.prompt?.kind ?? PromptKind.UNSPECIFIED,
        completionId: signals.completionId,
        detail: signals.detail,
        command: found.process.argv.join(" "),
        lastActivity: signals.lastActivity,
        chatRevision: `${pane.sessionActivity}`,
      };
    }
    const root = tree[0];
    const command = root ? root.argv.join(" ") : pane.paneCurrentCommand;
    if (root && isShell(root)) {
      const foreground = pane.paneCurrentCommand;
      const running = foreground !== "" && foreground !== programName(root) && foreground !== root.comm;
      if (system) return base(Cli.SHELL, SessionStatus.IDLE, StatusReason.NOT_TRACKED, "system session", command);
      return running
        ? base(Cli.SHELL, SessionStatus.WORKING, StatusReason.COMMAND_RUNNING, `foreground: ${foreground}`, command)
        : base(Cli.SHELL, SessionStatus.IDLE, StatusReason.SHELL_PROMPT, "shell at its prompt", command);
    }
    return base(
      Cli.OTHER,
      SessionStatus.IDLE,
      StatusReason.NOT_TRACKED,
      system ? "system session" : "no agent CLI or shell in the pane",
      command,
    );

    function base(
      cli: Cli,
      status: SessionStatus,
      reason: StatusReason,
      detail: string,
      cmd: string,
    ): SessionObservation {
      return {
        cli,
        status,
        reason,
        prompt: "",
        promptKind: PromptKind.UNSPECIFIED,
        completionId: "",
        detail,
        command: cmd,
        chatRevision: `${pane.sessionActivity}`,
      };
    }
  }

  private findAgent(tree: readonly ProcessInfo[]): { agent: AgentModule; process: ProcessInfo } | undefined {
    for (const process of tree) {
      for (const agent of this.options.agents) {
        if (agent.recognises(process)) return { agent, process };
      }
    }
    return undefined;
  }

  private contextFor(pane: PaneInfo, process: ProcessInfo): AgentContext {
    let screen: Promise<string> | undefined;
    let env: Promise<Readonly<Record<string, string | undefined>>> | undefined;
    return {
      pane,
      process,
      processStart: new Date(this.bootTime() + (process.startTicks / CLOCK_TICKS_PER_SECOND) * 1000),
      screen: () => {
        screen ??= readPaneBottom(this.options.tmux, pane.paneId).catch(() => "");
        return screen;
      },
      env: () => {
        env ??= readEnviron(process.pid).then((e) => e ?? this.options.nodeEnv);
        return env;
      },
    };
  }

  private bootTime(): number {
    if (this.bootTimeMs === undefined) {
      this.bootTimeMs = Date.now() - uptimeSeconds() * 1000;
    }
    return this.bootTimeMs;
  }
}

function uptimeSeconds(): number {
  // /proc/uptime has sub-second resolution; read once per engine, it anchors every start time.
  try {
    return Number(readFileSync("/proc/uptime", "utf8").split(" ")[0]) || 0;
  } catch {
    return 0;
  }
}

/** Reads `/proc/<pid>/environ`; undefined when not readable (another user's process, gone). */
export async function readEnviron(pid: number): Promise<Record<string, string> | undefined> {
  try {
    const raw = await readFile(`/proc/${pid}/environ`);
    const env: Record<string, string> = {};
    for (const entry of raw.toString("utf8").split("\0")) {
      const eq = entry.indexOf("=");
      if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
    }
    return env;
  } catch {
    return undefined;
  }
}
