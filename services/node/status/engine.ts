import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { Cli, PromptKind, SessionStatus, StatusReason } from "../../../gen/staragent/v1/session_pb.js";
import { type AgentContext, type AgentModule, SCREEN_RECHECK_MS } from "../agents/agent.js";
import {
  descendants,
  type ProcessInfo,
  type ProcessTable,
  readProcess,
  readProcessTable,
  readProcessTree,
} from "../agents/process-table.js";
import type { TmuxClient } from "../tmux/client.js";
import { SYSTEM_SESSION_NAMES } from "../tmux/names.js";
import type { PaneInfo } from "../tmux/panes.js";
import type { SessionInspector, SessionObservation } from "./observation.js";
import { decideStatus } from "./precedence.js";
import { readPaneBottom } from "./screen.js";
import { isShell, programName } from "./shells.js";

/** Clock ticks per second for `/proc/<pid>/stat` start times (USER_HZ, 100 on Linux). */
const CLOCK_TICKS_PER_SECOND = 100;
/**
 * How often a pane without an agent CLI has its process tree read again while tmux reports the same
 * foreground command: a CLI started under an unchanged command name (e.g. `node`) is found within
 * this time, and a pane of shells costs a few `/proc` reads per this interval, not per poll.
 */
const PROCESS_RESCAN_MS = 2_000;
/** CLI environments remembered (one per CLI process; an environment never changes after exec). */
const MAX_CACHED_ENVIRONMENTS = 1024;

/** What the status engine needs. */
export interface StatusEngineOptions {
  readonly tmux: TmuxClient;
  /** The supported CLIs, tried in order on each process below a pane. */
  readonly agents: readonly AgentModule[];
  /** The node's own environment, the fallback for a CLI process whose environment cannot be read. */
  readonly nodeEnv: Readonly<Record<string, string | undefined>>;
  /** Reads the whole process table; tests may point it elsewhere. */
  readonly readProcesses?: () => Promise<ProcessTable>;
  /** Reads the processes below a pid (undefined: not supported, read the table). */
  readonly readTree?: (rootPid: number) => Promise<ProcessInfo[] | undefined>;
}

/** What was found below one pane, reused while the pane's process and foreground command stay. */
interface PaneProcesses {
  readonly panePid: number;
  readonly command: string;
  readonly checkedAt: number;
  readonly root: ProcessInfo | undefined;
  readonly found: { agent: AgentModule; process: ProcessInfo } | undefined;
}

/** A pane bottom read, reused while the pane shows nothing new (SCREEN_RECHECK_MS). */
interface ScreenRead {
  readonly key: string;
  readonly at: number;
  readonly text: Promise<string>;
}

/**
 * The status engine: finds the CLI in each session's active pane, lets its agent module read the
 * native state and the pane bottom, and applies the precedence of DESIGN.md §5. It keeps the work of
 * a poll proportional to what changed: process trees are read again only when a pane's foreground
 * command changes (or its CLI exits), environments once per process, pane bottoms at most once per
 * SCREEN_RECHECK_MS unless a module asks for a fresh one, and logs by size and mtime (in the modules).
 */
export class StatusEngine implements SessionInspector {
  private readonly readProcesses: () => Promise<ProcessTable>;
  private readonly readTree: (rootPid: number) => Promise<ProcessInfo[] | undefined>;
  private readonly paneProcesses = new Map<string, PaneProcesses>();
  private readonly screens = new Map<string, ScreenRead>();
  private readonly environments = new Map<string, Promise<Readonly<Record<string, string | undefined>>>>();
  private bootTimeMs: number | undefined;

  constructor(private readonly options: StatusEngineOptions) {
    this.readProcesses = options.readProcesses ?? (() => readProcessTable());
    this.readTree = options.readTree ?? ((pid) => readProcessTree(pid));
  }

  async inspect(
    panes: ReadonlyMap<string, PaneInfo>,
    seen: ReadonlyMap<string, string>,
  ): Promise<Map<string, SessionObservation>> {
    const processes = await this.processesOf(panes);
    const out = new Map<string, SessionObservation>();
    await Promise.all(
      [...panes].map(async ([session, pane]) => {
        const found = processes.get(pane.paneId);
        out.set(session, await this.inspectPane(pane, found, seen.get(session) ?? ""));
      }),
    );
    const live = new Set([...panes.values()].map((p) => p.paneId));
    for (const id of this.screens.keys()) if (!live.has(id)) this.screens.delete(id);
    return out;
  }

  /** The root process and the CLI below each pane, reading /proc only where something changed. */
  private async processesOf(panes: ReadonlyMap<string, PaneInfo>): Promise<Map<string, PaneProcesses>> {
    const now = Date.now();
    const result = new Map<string, PaneProcesses>();
    const stale: PaneInfo[] = [];
    await Promise.all(
      [...panes.values()].map(async (pane) => {
        const cached = this.paneProcesses.get(pane.paneId);
        if (cached && cached.panePid === pane.panePid && cached.command === pane.paneCurrentCommand) {
          const valid = cached.found
            ? await stillRunning(cached.found.process)
            : now - cached.checkedAt < PROCESS_RESCAN_MS;
          if (valid) {
            result.set(pane.paneId, cached);
            return;
          }
        }
        stale.push(pane);
      }),
    );
    if (stale.length > 0) {
      let table: ProcessTable | undefined;
      for (const pane of stale) {
        let tree = await this.readTree(pane.panePid);
        if (!tree) {
          table ??= await this.readProcesses();
          tree = descendants(table, pane.panePid);
        }
        const entry: PaneProcesses = {
          panePid: pane.panePid,
          command: pane.paneCurrentCommand,
          checkedAt: now,
          root: tree[0],
          found: this.findAgent(tree),
        };
        this.paneProcesses.set(pane.paneId, entry);
        result.set(pane.paneId, entry);
      }
    }
    for (const id of this.paneProcesses.keys()) if (!result.has(id)) this.paneProcesses.delete(id);
    return result;
  }

  private async inspectPane(
    pane: PaneInfo,
    processes: PaneProcesses | undefined,
    seenId: string,
  ): Promise<SessionObservation> {
    const found = processes?.found;
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
        lastUserTurn: signals.lastUserTurn ?? "",
        hasNativeLog: signals.hasNativeLog ?? false,
      };
    }
    const root = processes?.root;
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
        hasNativeLog: false,
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
    return {
      pane,
      process,
      processStart: new Date(this.bootTime() + (process.startTicks / CLOCK_TICKS_PER_SECOND) * 1000),
      screen: (maxAgeMs = SCREEN_RECHECK_MS) => {
        screen ??= this.screenOf(pane, maxAgeMs);
        return screen;
      },
      env: () => this.environmentOf(process),
    };
  }

  /** The pane bottom, reused when read less than `maxAgeMs` ago and the pane shows nothing new. */
  private screenOf(pane: PaneInfo, maxAgeMs: number): Promise<string> {
    const key = `${pane.sessionActivity}|${pane.paneTitle}|${pane.windowWidth}x${pane.windowHeight}|${pane.alternateOn}`;
    const cached = this.screens.get(pane.paneId);
    const now = Date.now();
    if (cached && cached.key === key && now - cached.at < maxAgeMs) return cached.text;
    const text = readPaneBottom(this.options.tmux, pane.paneId).catch(() => "");
    this.screens.set(pane.paneId, { key, at: now, text });
    return text;
  }

  private environmentOf(process: ProcessInfo): Promise<Readonly<Record<string, string | undefined>>> {
    const key = `${process.pid}:${process.startTicks}`;
    let env = this.environments.get(key);
    if (!env) {
      env = readEnviron(process.pid).then((e) => e ?? this.options.nodeEnv);
      this.environments.set(key, env);
      if (this.environments.size > MAX_CACHED_ENVIRONMENTS) {
        const oldest = this.environments.keys().next().value;
        if (oldest !== undefined) this.environments.delete(oldest);
      }
    }
    return env;
  }

  private bootTime(): number {
    if (this.bootTimeMs === undefined) {
      this.bootTimeMs = Date.now() - uptimeSeconds() * 1000;
    }
    return this.bootTimeMs;
  }
}

/** True when the process still runs (same pid, same start time: not a reused pid). */
async function stillRunning(process: ProcessInfo): Promise<boolean> {
  const now = await readProcess(process.pid);
  return now !== undefined && now.startTicks === process.startTicks;
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
