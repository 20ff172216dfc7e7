import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { Cli, PromptKind, SessionStatus, StatusReason } from "../../../gen/staragent/v1/session_pb.js";
import { SYSTEM_SESSION_NAMES } from "../../common/resource-names.js";
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
import { type PaneInfo, paneStamp } from "../tmux/panes.js";
import type { SessionInspector, SessionObservation } from "./observation.js";
import { PathWatcher } from "./path-watcher.js";
import { decideStatus } from "./precedence.js";
import { paneBottom, readPaneScreen } from "./screen.js";
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
/**
 * Longest a settled observation (an idle or completed CLI session whose pane and watched files did not
 * change) is reused before its native state is read again anyway: bounds how late a change no file
 * event reported (an unwatchable folder, the inotify limit, a CLI replaced under the same pane
 * command) is seen, at the cost of one cheap read per session per this interval.
 */
const SETTLED_RECHECK_MS = 30_000;

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

/** An observation reused while its pane, the seen id and the watched files stay the same. */
interface SettledObservation {
  /** paneStamp and seen id when it was made. */
  readonly stamp: string;
  /** The pane's change generation when its files were read (a file event since then bumps it). */
  readonly generation: number;
  readonly at: number;
  readonly observation: SessionObservation;
}

/** One pane's inspection, with what decides whether it may be reused. */
interface PaneInspection {
  readonly observation: SessionObservation;
  /** True when only a pane or watched file change can change it (no running turn, prompt or screen read). */
  readonly settled: boolean;
  /** True when it can change with nothing but time or the screen: the loop should poll fast. */
  readonly fast: boolean;
  readonly statePaths: readonly string[];
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
 * While a watch loop subscribes (`watchChanges`), it watches the files each CLI's state lives in and
 * reuses a settled session's observation until its pane, its seen id or one of those files changes
 * (or SETTLED_RECHECK_MS passes): 100 idle sessions then cost a comparison each per poll.
 */
export class StatusEngine implements SessionInspector {
  private readonly readProcesses: () => Promise<ProcessTable>;
  private readonly readTree: (rootPid: number) => Promise<ProcessInfo[] | undefined>;
  private readonly paneProcesses = new Map<string, PaneProcesses>();
  private readonly screens = new Map<string, ScreenRead>();
  private readonly environments = new Map<string, Promise<Readonly<Record<string, string | undefined>>>>();
  private readonly settled = new Map<string, SettledObservation>();
  /** Bumped per pane when one of its watched files changes. */
  private readonly generations = new Map<string, number>();
  private readonly statePaths = new Map<string, readonly string[]>();
  /** The newest observation per pane: an equal new one is replaced by it, so unchanged stays identical. */
  private readonly previous = new Map<string, SessionObservation>();
  private pathPanes = new Map<string, Set<string>>();
  private watcher: PathWatcher | undefined;
  private fastPoll = false;
  private bootTimeMs: number | undefined;

  constructor(private readonly options: StatusEngineOptions) {
    this.readProcesses = options.readProcesses ?? (() => readProcessTable());
    this.readTree = options.readTree ?? ((pid) => readProcessTree(pid));
  }

  get needsFastPoll(): boolean {
    return this.fastPoll;
  }

  /**
   * Watches the native state of the sessions inspected from now on and calls `wake` when it changes.
   * One subscriber at a time (the machine's watch loop); unsubscribing stops watching and reuse.
   */
  watchChanges(wake: () => void): () => void {
    this.watcher?.close();
    const watcher = new PathWatcher((path) => {
      for (const paneId of this.pathPanes.get(path) ?? []) this.bump(paneId);
      wake();
    });
    this.watcher = watcher;
    this.settled.clear();
    return () => {
      watcher.close();
      if (this.watcher === watcher) {
        this.watcher = undefined;
        this.settled.clear();
      }
    };
  }

  async inspect(
    panes: ReadonlyMap<string, PaneInfo>,
    seen: ReadonlyMap<string, string>,
  ): Promise<Map<string, SessionObservation>> {
    const now = Date.now();
    const out = new Map<string, SessionObservation>();
    const toRead: [string, PaneInfo, string][] = [];
    const folders = folderCensus(panes.values());
    for (const [session, pane] of panes) {
      // Another pane opening or leaving the folder may change which native log is this pane's.
      const stamp = `${paneStamp(pane)}\0${seen.get(session) ?? ""}\0${folders.get(pane.paneCurrentPath) ?? ""}`;
      const cached = this.watcher ? this.settled.get(pane.paneId) : undefined;
      if (
        cached &&
        cached.stamp === stamp &&
        cached.generation === this.generation(pane.paneId) &&
        now - cached.at < SETTLED_RECHECK_MS
      ) {
        out.set(session, cached.observation);
      } else {
        toRead.push([session, pane, stamp]);
      }
    }
    const live = new Set([...panes.values()].map((p) => p.paneId));
    const processes = await this.processesOf(
      toRead.map(([, pane]) => pane),
      live,
    );
    let fastPoll = false;
    const livePanes = [...panes.values()];
    await Promise.all(
      toRead.map(async ([session, pane, stamp]) => {
        const generation = this.generation(pane.paneId);
        const siblings = this.siblingsOf(pane, processes.get(pane.paneId), livePanes);
        const read = await this.inspectPane(pane, processes.get(pane.paneId), seen.get(session) ?? "", siblings);
        const before = this.previous.get(pane.paneId);
        const observation = before && sameObservation(before, read.observation) ? before : read.observation;
        this.previous.set(pane.paneId, observation);
        out.set(session, observation);
        this.statePaths.set(pane.paneId, read.statePaths);
        if (read.settled) this.settled.set(pane.paneId, { stamp, generation, at: now, observation });
        else this.settled.delete(pane.paneId);
        if (read.fast) fastPoll = true;
      }),
    );
    this.fastPoll = fastPoll;
    for (const id of this.screens.keys()) if (!live.has(id)) this.screens.delete(id);
    for (const map of [this.settled, this.generations, this.statePaths, this.previous]) {
      for (const id of map.keys()) if (!live.has(id)) map.delete(id);
    }
    await this.watchStatePaths();
    return out;
  }

  /** Points the watcher at the state paths of the live panes; a newly armed path's panes are read again. */
  private async watchStatePaths(): Promise<void> {
    const watcher = this.watcher;
    if (!watcher) return;
    const pathPanes = new Map<string, Set<string>>();
    for (const [paneId, paths] of this.statePaths) {
      for (const path of paths) {
        const set = pathPanes.get(path);
        if (set) set.add(paneId);
        else pathPanes.set(path, new Set([paneId]));
      }
    }
    this.pathPanes = pathPanes;
    const armed = await watcher.set(pathPanes.keys());
    // Writes before a watch was armed were not seen by it: look at those panes once more.
    for (const path of armed) for (const paneId of pathPanes.get(path) ?? []) this.bump(paneId);
  }

  private generation(paneId: string): number {
    return this.generations.get(paneId) ?? 0;
  }

  private bump(paneId: string): void {
    this.generations.set(paneId, this.generation(paneId) + 1);
  }

  /** The root process and the CLI below each pane, reading /proc only where something changed. */
  private async processesOf(
    panes: readonly PaneInfo[],
    live: ReadonlySet<string>,
  ): Promise<Map<string, PaneProcesses>> {
    const now = Date.now();
    const result = new Map<string, PaneProcesses>();
    const stale: PaneInfo[] = [];
    await Promise.all(
      panes.map(async (pane) => {
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
    for (const id of this.paneProcesses.keys()) if (!live.has(id)) this.paneProcesses.delete(id);
    return result;
  }

  /** The CLI processes of the same module in other panes of `pane`'s folder (cached process trees). */
  private siblingsOf(pane: PaneInfo, processes: PaneProcesses | undefined, live: readonly PaneInfo[]): ProcessInfo[] {
    const agent = processes?.found?.agent;
    if (!agent) return [];
    const out: ProcessInfo[] = [];
    for (const other of live) {
      if (other.paneId === pane.paneId || other.paneCurrentPath !== pane.paneCurrentPath || other.paneDead) continue;
      const found = this.paneProcesses.get(other.paneId)?.found;
      if (found?.agent === agent) out.push(found.process);
    }
    return out;
  }

  private async inspectPane(
    pane: PaneInfo,
    processes: PaneProcesses | undefined,
    seenId: string,
    siblings: readonly ProcessInfo[],
  ): Promise<PaneInspection> {
    const found = processes?.found;
    const system = SYSTEM_SESSION_NAMES.has(pane.sessionName);
    const paneRevision = `${pane.sessionActivity}.${pane.historySize}.${pane.cursorY}.${pane.cursorX}`;
    // Shells and other programs: derived from the pane and the cached process tree alone, no file reads.
    const computed = (observation: SessionObservation): PaneInspection => ({
      observation,
      settled: false,
      fast: false,
      statePaths: [],
    });
    if (pane.paneDead) {
      return computed(
        base(
          found?.agent.cli ?? Cli.OTHER,
          SessionStatus.IDLE,
          StatusReason.PROCESS_EXITED,
          "the pane's process has exited",
          "",
        ),
      );
    }
    if (found && !system) {
      let screenRead = false;
      const context = this.contextFor(pane, found.process, siblings, () => {
        screenRead = true;
      });
      const signals = await found.agent.observe(context);
      const { status, reason } = decideStatus(signals, seenId);
      const observation: SessionObservation = {
        cli: found.agent.cli,
        status,
        reason,
        prompt: signals.prompt?.text ?? "",
        promptKind: signals.prompt?.kind ?? PromptKind.UNSPECIFIED,
        completionId: signals.completionId,
        detail: signals.detail,
        command: found.process.argv.join(" "),
        lastActivity: signals.lastActivity,
        // tmux's session_activity has 1 s resolution: the scrollback size, the cursor and the native
        // log's mtime change with finer grain, and none of them moves while a session is idle.
        chatRevision: `${paneRevision}.${signals.lastActivity?.getTime() ?? 0}`,
        lastUserTurn: signals.lastUserTurn ?? "",
        hasNativeLog: signals.hasNativeLog ?? false,
        chatLogPath: signals.chatLog?.path ?? "",
        chatLogSession: signals.chatLog?.session ?? "",
        chatLogDetail: signals.chatLogDetail ?? "",
      };
      const statePaths = signals.statePaths ?? [];
      const settled =
        statePaths.length > 0 &&
        !screenRead &&
        status !== SessionStatus.WORKING &&
        reason !== StatusReason.INPUT_PROMPT;
      return { observation, settled, fast: !settled, statePaths };
    }
    const root = processes?.root;
    const command = root ? root.argv.join(" ") : pane.paneCurrentCommand;
    if (root && isShell(root)) {
      const foreground = pane.paneCurrentCommand;
      const running = foreground !== "" && foreground !== programName(root) && foreground !== root.comm;
      if (system)
        return computed(base(Cli.SHELL, SessionStatus.IDLE, StatusReason.NOT_TRACKED, "system session", command));
      return computed(
        running
          ? base(Cli.SHELL, SessionStatus.WORKING, StatusReason.COMMAND_RUNNING, `foreground: ${foreground}`, command)
          : base(Cli.SHELL, SessionStatus.IDLE, StatusReason.SHELL_PROMPT, "shell at its prompt", command),
      );
    }
    return computed(
      base(
        Cli.OTHER,
        SessionStatus.IDLE,
        StatusReason.NOT_TRACKED,
        system ? "system session" : "no agent CLI or shell in the pane",
        command,
      ),
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
        chatRevision: paneRevision,
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

  private contextFor(
    pane: PaneInfo,
    process: ProcessInfo,
    siblings: readonly ProcessInfo[],
    onScreenRead: () => void,
  ): AgentContext {
    let screen: Promise<string> | undefined;
    const whole = (maxAgeMs: number) => {
      onScreenRead();
      screen ??= this.screenOf(pane, maxAgeMs);
      return screen;
    };
    return {
      pane,
      process,
      siblings,
      processStart: this.processStart(process),
      screen: async (maxAgeMs = SCREEN_RECHECK_MS) => paneBottom(await whole(maxAgeMs)),
      visibleScreen: async (maxAgeMs = SCREEN_RECHECK_MS) => `${pane.paneTitle}\n${await whole(maxAgeMs)}`,
      env: () => this.environmentOf(process),
    };
  }

  /** When a process started, from its start time in clock ticks since boot. */
  private processStart(process: ProcessInfo): Date {
    return new Date(this.bootTime() + (process.startTicks / CLOCK_TICKS_PER_SECOND) * 1000);
  }

  /** The pane's visible screen, reused when read less than `maxAgeMs` ago and the pane shows nothing new. */
  private screenOf(pane: PaneInfo, maxAgeMs: number): Promise<string> {
    const key = `${pane.sessionActivity}|${pane.paneTitle}|${pane.windowWidth}x${pane.windowHeight}|${pane.alternateOn}`;
    const cached = this.screens.get(pane.paneId);
    const now = Date.now();
    if (cached && cached.key === key && now - cached.at < maxAgeMs) return cached.text;
    const text = readPaneScreen(this.options.tmux, pane.paneId).catch(() => "");
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

/**
 * Per folder (`pane_current_path`), the panes in it with their process and command: a pane's settled
 * observation is read again when this changes for its folder (a second instance of a CLI opened there).
 */
function folderCensus(panes: Iterable<PaneInfo>): Map<string, string> {
  const census = new Map<string, string>();
  for (const pane of panes) {
    const entry = `${pane.paneId}:${pane.panePid}:${pane.paneCurrentCommand}`;
    const before = census.get(pane.paneCurrentPath);
    census.set(pane.paneCurrentPath, before === undefined ? entry : `${before},${entry}`);
  }
  return census;
}

/** True when two observations say the same (field by field; times by value). */
function sameObservation(a: SessionObservation, b: SessionObservation): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)] as (keyof SessionObservation)[]);
  for (const key of keys) {
    const x = a[key];
    const y = b[key];
    if (x instanceof Date && y instanceof Date ? x.getTime() !== y.getTime() : x !== y) return false;
  }
  return true;
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
