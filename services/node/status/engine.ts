import { Cli, SessionStatus, StatusReason } from "../../../gen/staragent/v1/session_pb.js";
import { SYSTEM_SESSION_NAMES } from "../../common/resource-names.js";
import { type AgentContext, type AgentModule, type AgentSignals, SCREEN_RECHECK_MS } from "../agents/agent.js";
import type { ProcessInfo, ProcessTable } from "../agents/process-table.js";
import type { AgentRegistry } from "../agents/registry.js";
import type { TmuxClient } from "../tmux/client.js";
import type { PaneInfo } from "../tmux/panes.js";
import { agentObservation, plainObservation, type SessionInspector, type SessionObservation } from "./observation.js";
import { type FoundAgent, PaneProcesses } from "./pane-processes.js";
import { decideStatus } from "./precedence.js";
import { PromptConfirmations, type PromptStanding } from "./prompt-confirmations.js";
import { paneBottom } from "./screen.js";
import { ScreenCache } from "./screen-cache.js";
import { reuseStamps, SettledSessions } from "./settled-sessions.js";

/** What the status engine needs. */
export interface StatusEngineOptions {
  readonly tmux: TmuxClient;
  /** The supported CLIs: `tree` modules tried in order on each process below a pane, then `root` ones. */
  readonly agents: AgentRegistry;
  /** The node's own environment, the fallback for a CLI process whose environment cannot be read. */
  readonly nodeEnv: Readonly<Record<string, string | undefined>>;
  /** Reads the whole process table; tests may point it elsewhere. */
  readonly readProcesses?: () => Promise<ProcessTable>;
  /** Reads the processes below a pid (undefined: not supported, read the table). */
  readonly readTree?: (rootPid: number) => Promise<ProcessInfo[] | undefined>;
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

/**
 * The status engine: finds the CLI in each session's active pane (`PaneProcesses`), lets its agent
 * module read the native state and the pane bottom (`ScreenCache`), and applies the precedence of
 * docs/status.md. While a watch loop subscribes (`watchChanges`), a settled session's observation is
 * reused until something it depends on changes (`SettledSessions`).
 */
export class StatusEngine implements SessionInspector {
  private readonly processes: PaneProcesses;
  private readonly screens: ScreenCache;
  private readonly settled = new SettledSessions();
  private readonly prompts = new PromptConfirmations();
  private readonly rootModules: readonly AgentModule[];
  private fastPoll = false;

  constructor(options: StatusEngineOptions) {
    const modules = options.agents.modules;
    this.processes = new PaneProcesses({ ...options, agents: modules.filter((m) => m.scope === "tree") });
    this.rootModules = modules.filter((m) => m.scope === "root");
    this.screens = new ScreenCache(options.tmux);
  }

  get needsFastPoll(): boolean {
    return this.fastPoll;
  }

  watchChanges(wake: () => void): () => void {
    return this.settled.watch(wake);
  }

  async inspect(
    panes: ReadonlyMap<string, PaneInfo>,
    seen: ReadonlyMap<string, string>,
  ): Promise<Map<string, SessionObservation>> {
    const now = Date.now();
    const out = new Map<string, SessionObservation>();
    const toRead: [string, PaneInfo, string][] = [];
    for (const [session, stamp] of reuseStamps(panes, seen)) {
      const pane = panes.get(session) as PaneInfo;
      const reused = this.settled.reusable(pane.paneId, stamp, now);
      if (reused) out.set(session, reused);
      else toRead.push([session, pane, stamp]);
    }
    const live = new Set([...panes.values()].map((p) => p.paneId));
    const found = await this.processes.of(
      toRead.map(([, pane]) => pane),
      live,
    );
    let fastPoll = false;
    const livePanes = [...panes.values()];
    await Promise.all(
      toRead.map(async ([session, pane, stamp]) => {
        const generation = this.settled.generation(pane.paneId);
        const entry = found.get(pane.paneId);
        const siblings = this.processes.siblingsOf(pane, entry?.found, livePanes);
        const read = await this.inspectPane(pane, entry?.found, entry?.root, seen.get(session) ?? "", siblings);
        const record = { stamp, generation, at: now, settled: read.settled, statePaths: read.statePaths };
        out.set(session, this.settled.record(pane.paneId, record, read.observation));
        if (read.fast) fastPoll = true;
      }),
    );
    this.fastPoll = fastPoll;
    this.screens.prune(live);
    this.prompts.prune(live);
    await this.settled.prune(live);
    return out;
  }

  /** The precedence (docs/status.md) for one pane: an exited pane, else its agent CLI, else its root program, else nothing tracked. */
  private async inspectPane(
    pane: PaneInfo,
    found: FoundAgent | undefined,
    root: ProcessInfo | undefined,
    seenId: string,
    siblings: readonly ProcessInfo[],
  ): Promise<PaneInspection> {
    const system = SYSTEM_SESSION_NAMES.has(pane.sessionName);
    const paneRevision = `${pane.sessionActivity}.${pane.historySize}.${pane.cursorY}.${pane.cursorX}`;
    // Programs read from the pane alone (shells, others): no file reads, nothing to reuse or watch.
    const computed = (cli: Cli, status: SessionStatus, reason: StatusReason, detail: string, command: string) => ({
      observation: plainObservation(cli, status, reason, detail, command, paneRevision),
      settled: false,
      fast: false,
      statePaths: [],
    });
    if (pane.paneDead) {
      const cli = found?.agent.cli ?? Cli.OTHER;
      return computed(cli, SessionStatus.IDLE, StatusReason.PROCESS_EXITED, "the pane's process has exited", "");
    }
    if (found && !system) {
      let screenRead = false;
      let capture: number | undefined;
      const context = this.contextFor(pane, found.process, siblings, (read) => {
        screenRead = true;
        capture = read;
      });
      const observed = await found.agent.observe(context);
      const standing = this.standing(pane.paneId, observed, capture);
      const before = this.settled.previousOf(pane.paneId);
      // A prompt just drawn, maybe half: the session shows what it showed before until a second
      // capture (a pane seen for the first time: as without the prompt), so nothing announces it twice.
      if (standing === "new" && before) {
        return { observation: before, settled: false, fast: true, statePaths: observed.statePaths ?? [] };
      }
      const signals =
        standing === "confirmed"
          ? observed
          : standing === "new"
            ? withoutPrompt(observed)
            : withoutPromptDetails(observed);
      const { status, reason } = signals.verdict ?? decideStatus(signals, seenId);
      const observation = agentObservation(found.agent.cli, found.process, signals, { status, reason }, paneRevision);
      // Read from the pane's own facts (a screen-only CLI): re-read at every look, cheaply, with no fast poll.
      if (signals.paneOnly) return { observation, settled: false, fast: false, statePaths: [] };
      const statePaths = signals.statePaths ?? [];
      const settled =
        statePaths.length > 0 &&
        !screenRead &&
        signals.pending !== true &&
        status !== SessionStatus.WORKING &&
        reason !== StatusReason.INPUT_PROMPT;
      return { observation, settled, fast: !settled, statePaths };
    }
    const command = root ? root.argv.join(" ") : pane.paneCurrentCommand;
    const program = root ? this.rootModules.find((m) => m.recognises(root)) : undefined;
    if (!root || !program) {
      const detail = system ? "system session" : "no agent CLI or shell in the pane";
      return computed(Cli.OTHER, SessionStatus.IDLE, StatusReason.NOT_TRACKED, detail, command);
    }
    if (system) return computed(program.cli, SessionStatus.IDLE, StatusReason.NOT_TRACKED, "system session", command);
    let capture: number | undefined;
    const observed = await program.observe(
      this.contextFor(pane, root, [], (read) => {
        capture = read;
      }),
    );
    const signals =
      this.standing(pane.paneId, observed, capture) === "confirmed" ? observed : withoutPromptDetails(observed);
    const { status, reason } = signals.verdict ?? decideStatus(signals, seenId);
    return computed(program.cli, status, reason, signals.detail, command);
  }

  /**
   * How the look's prompt stands (PromptConfirmations): a prompt's details and fingerprint are given
   * only once two screen captures read it alike, and until then the pane's next look reads the screen
   * afresh. A prompt read from no screen (a native log) stands as read.
   */
  private standing(paneId: string, signals: AgentSignals, capture: number | undefined): PromptStanding {
    const pending = signals.prompt?.pending;
    if (!pending) {
      this.prompts.forget(paneId);
      return "confirmed";
    }
    if (capture === undefined) return "confirmed";
    const standing = this.prompts.confirm(paneId, pending.fingerprint, capture);
    if (standing !== "confirmed") this.screens.expire(paneId);
    return standing;
  }

  private contextFor(
    pane: PaneInfo,
    process: ProcessInfo,
    siblings: readonly ProcessInfo[],
    onScreenRead: (capture: number) => void,
  ): AgentContext {
    let screen: Promise<string> | undefined;
    const whole = (maxAgeMs: number) => {
      screen ??= this.screens.readCapture(pane, maxAgeMs).then((read) => {
        onScreenRead(read.capture);
        return read.text;
      });
      return screen;
    };
    return {
      pane,
      process,
      siblings,
      processStart: this.processes.startOf(process),
      screen: async (maxAgeMs = SCREEN_RECHECK_MS) => paneBottom(await whole(maxAgeMs)),
      visibleScreen: async (maxAgeMs = SCREEN_RECHECK_MS) => `${pane.paneTitle}\n${await whole(maxAgeMs)}`,
      env: () => this.processes.environmentOf(process),
    };
  }
}

/** The signals with their prompt's kind and question line only (no subject, choices or fingerprint). */
function withoutPromptDetails(signals: AgentSignals): AgentSignals {
  const prompt = signals.prompt;
  return prompt ? { ...signals, prompt: { kind: prompt.kind, text: prompt.text } } : signals;
}

/** The signals as if no prompt were on screen. */
function withoutPrompt(signals: AgentSignals): AgentSignals {
  const { prompt: _, ...rest } = signals;
  return rest;
}
