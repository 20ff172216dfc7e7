import { BoundedMap } from "../../common/bounded-map.js";
import type { AgentModule } from "../agents/agent.js";
import {
  bootTimeMs,
  descendants,
  type ProcessInfo,
  type ProcessTable,
  processStartTime,
  readEnviron,
  readProcessTable,
  readProcessTree,
  stillRunning,
} from "../agents/process-table.js";
import type { PaneInfo } from "../tmux/panes.js";
import { isKeepPaneWrapper } from "../tmux/sessions.js";

/**
 * How often a pane without an agent CLI has its process tree read again while tmux reports the same
 * foreground command: a CLI started under an unchanged command name (e.g. `node`) is found within
 * this time, and a pane of shells costs a few `/proc` reads per this interval, not per poll.
 */
const PROCESS_RESCAN_MS = 2_000;
/** CLI environments remembered (one per CLI process; an environment never changes after exec). */
const MAX_CACHED_ENVIRONMENTS = 1024;
/** Process start times remembered (one per CLI process seen; a few per pane over a day). */
const MAX_KNOWN_STARTS = 4096;

/** The CLI found below a pane, and the module that recognised it. */
export interface FoundAgent {
  readonly agent: AgentModule;
  readonly process: ProcessInfo;
}

/** What was found below one pane, reused while the pane's process and foreground command stay. */
export interface PaneProcessEntry {
  readonly panePid: number;
  readonly command: string;
  readonly checkedAt: number;
  readonly root: ProcessInfo | undefined;
  readonly found: FoundAgent | undefined;
}

/** What the pane process cache reads from. */
export interface PaneProcessesOptions {
  /** The `tree`-scoped modules, tried in order on each process below a pane. */
  readonly agents: readonly AgentModule[];
  /** The node's own environment, the fallback for a CLI process whose environment cannot be read. */
  readonly nodeEnv: Readonly<Record<string, string | undefined>>;
  /** Reads the whole process table; tests may point it elsewhere. */
  readonly readProcesses?: () => Promise<ProcessTable>;
  /** Reads the processes below a pid (undefined: not supported, read the table). */
  readonly readTree?: (rootPid: number) => Promise<ProcessInfo[] | undefined>;
  /** The boot time on the wall clock now (bootTimeMs); tests may move it as a slewed clock does. */
  readonly bootTime?: () => number;
}

/**
 * The processes below each pane and what they are, read from `/proc` only where something changed:
 * a pane's tree again only when its foreground command changes (or its CLI exits, or
 * PROCESS_RESCAN_MS passes for a pane without one), a CLI's environment once per process.
 */
export class PaneProcesses {
  private readonly readProcesses: () => Promise<ProcessTable>;
  private readonly readTree: (rootPid: number) => Promise<ProcessInfo[] | undefined>;
  private readonly entries = new Map<string, PaneProcessEntry>();
  private readonly environments = new Map<string, Promise<Readonly<Record<string, string | undefined>>>>();
  /** Per process (pid and start ticks), its start time as first worked out. */
  private readonly starts = new BoundedMap<string, number>(MAX_KNOWN_STARTS);
  private readonly bootTime: () => number;

  constructor(private readonly options: PaneProcessesOptions) {
    this.readProcesses = options.readProcesses ?? (() => readProcessTable());
    this.bootTime = options.bootTime ?? (() => bootTimeMs());
    this.readTree = options.readTree ?? ((pid) => readProcessTree(pid));
  }

  /** The root process and the CLI below each of `panes`; forgets panes not in `live`. */
  async of(panes: readonly PaneInfo[], live: ReadonlySet<string>): Promise<Map<string, PaneProcessEntry>> {
    const now = Date.now();
    const result = new Map<string, PaneProcessEntry>();
    const stale: PaneInfo[] = [];
    await Promise.all(
      panes.map(async (pane) => {
        const cached = this.entries.get(pane.paneId);
        if (cached && cached.panePid === pane.panePid && cached.command === pane.paneCurrentCommand) {
          const valid = cached.found ? stillRunning(cached.found.process) : now - cached.checkedAt < PROCESS_RESCAN_MS;
          if (valid) {
            result.set(pane.paneId, cached);
            return;
          }
        }
        stale.push(pane);
      }),
    );
    let table: ProcessTable | undefined;
    for (const pane of stale) {
      let tree = await this.readTree(pane.panePid);
      if (!tree) {
        table ??= await this.readProcesses();
        tree = descendants(table, pane.panePid);
      }
      const entry: PaneProcessEntry = {
        panePid: pane.panePid,
        command: pane.paneCurrentCommand,
        checkedAt: now,
        // The wrapper that keeps a created session's pane is no part of what the person runs.
        // The wrapper that keeps a created session's pane is no part of what the person runs.
        root: tree.find((p) => !isKeepPaneWrapper(p)) ?? tree[0],
        found: this.findAgent(tree),
      };
      this.entries.set(pane.paneId, entry);
      result.set(pane.paneId, entry);
    }
    for (const id of this.entries.keys()) if (!live.has(id)) this.entries.delete(id);
    return result;
  }

  /** The CLI processes of the same module in the other live panes of `pane`'s folder (cached trees). */
  siblingsOf(pane: PaneInfo, found: FoundAgent | undefined, live: readonly PaneInfo[]): ProcessInfo[] {
    if (!found) return [];
    const out: ProcessInfo[] = [];
    for (const other of live) {
      if (other.paneId === pane.paneId || other.paneCurrentPath !== pane.paneCurrentPath || other.paneDead) continue;
      const theirs = this.entries.get(other.paneId)?.found;
      if (theirs?.agent === found.agent) out.push(theirs.process);
    }
    return out;
  }

  /** A CLI process's environment (read once per process), falling back to the node's own. */
  environmentOf(process: ProcessInfo): Promise<Readonly<Record<string, string | undefined>>> {
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

  /**
   * When a process started, on the wall clock its logs are dated by: worked out at the process's first
   * sight from the boot time as of then, and kept. A boot time read once and kept for the Node's life
   * would drift from the wall clock as NTP slews it (about 0.1 ms a second was seen, seconds a day),
   * until a new process's first turn passed for an earlier run's, and a log it wrote for older than it.
   */
  startOf(process: ProcessInfo): Date {
    const key = `${process.pid}:${process.startTicks}`;
    let start = this.starts.get(key);
    if (start === undefined) {
      start = processStartTime(process, this.bootTime()).getTime();
      this.starts.set(key, start);
    }
    return new Date(start);
  }

  private findAgent(tree: readonly ProcessInfo[]): FoundAgent | undefined {
    for (const process of tree) {
      for (const agent of this.options.agents) {
        if (agent.recognises(process)) return { agent, process };
      }
    }
    return undefined;
  }
}
