import { create } from "@bufbuild/protobuf";
import { timestampFromDate, timestampFromMs } from "@bufbuild/protobuf/wkt";
import {
  Cli,
  type PendingPrompt,
  PendingPromptSchema,
  type ServiceSupervision,
  ServiceSupervisionSchema,
  type Session,
  SessionEndSchema,
  SessionOrigin,
  SessionSchema,
  SessionType,
  type SessionWorktree,
  StatusReason,
} from "../../gen/staragent/v1/session_pb.js";
import { SYSTEM_SESSION_NAMES, sessionNameProblem, sessionResourceName } from "../common/resource-names.js";
import type { GoneSessions, LastSeen } from "./gone-sessions.js";
import { ModelReads, type ReadKind } from "./model-reads.js";
import type { SessionInspector, SessionObservation } from "./status/observation.js";
import type { SessionMarks } from "./store/session-marks.js";
import type { TmuxClient } from "./tmux/client.js";
import { DeadPanes, nudgeReaper } from "./tmux/dead-panes.js";
import { PaneLister } from "./tmux/pane-lister.js";
import { activePanes, type PaneInfo, paneStamp } from "./tmux/panes.js";
import { killSession } from "./tmux/sessions.js";
import type { SupervisionRecord } from "./tmux/supervision-record.js";
import { usageMessage } from "./usage-message.js";

/**
 * A session's last activity is reported to this many seconds: enough for "active 2 min ago", and a
 * pane printing all the time changes its Session (and every watcher's stream) at most this often.
 */
const ACTIVITY_STEP_S = 10;

/** A machine's sessions by tmux name, ordered by name. */
export type SessionMap = Map<string, Session>;

/** What a SessionModel is built from. */
export interface SessionModelOptions {
  /** The node id the sessions are named under (`local` on a Hub). */
  readonly nodeName: string;
  readonly tmux: TmuxClient;
  readonly inspector: SessionInspector;
  readonly marks: SessionMarks;
  /** True while the watch loop runs, so that the model stays fresh by itself. */
  readonly live: () => boolean;
  /** Every model read, in the order the reads began (the watch fan-out diffs them). */
  readonly onRead: (model: SessionMap) => void;
  /** The changed-file count and branch of a session folder (workspace/tracker.ts), and the folders in use. */
  readonly workspace?: {
    lookup(cwd: string): { changedFiles: number | undefined; branch: string };
    retain(cwds: ReadonlySet<string>): void;
  };
  /** Queued chat messages of a session (tmux name and creation time) not typed yet. */
  readonly queuedMessages?: (key: { tmuxSession: string; sessionCreated: number }) => number;
  /** The git worktree StarAgent made for a session, if any. */
  readonly worktree?: (key: { tmuxSession: string; sessionCreated: number }) => SessionWorktree | undefined;
  /**
   * How long a session StarAgent created stays listed after it ended (its pane dead) before the
   * machine removes it; DEFAULT_KEEP_ENDED_MS unless set. Sessions made by hand are never removed.
   */
  readonly keepEndedMs?: number;
  /** Says that an ended session was removed after keepEndedMs (the machine's log). */
  readonly onEndedRemoved?: (tmuxSession: string) => void;
  /** The sessions that vanished from tmux with an agent's log bound, listed as ended (gone-sessions.ts). */
  readonly gone?: GoneSessions;
}

/** An ended session stays listed for a day (STARAGENT_KEEP_ENDED_HOURS changes it). */
export const DEFAULT_KEEP_ENDED_MS = 24 * 60 * 60 * 1000;
/** Lines of an ended session's pane kept in `Session.ended.last_lines`. */
const ENDED_LAST_LINES = 15;
/** Lines of an ended pane's history searched for its last lines. */
const ENDED_CAPTURE_LINES = 200;

/** One session built before, and what it was built from. */
interface CachedSession {
  readonly key: string;
  readonly observation: SessionObservation | undefined;
  readonly session: Session;
}

/**
 * The model of one machine's sessions, read from `list-panes`, the status inspector and the state
 * files. It keeps the newest panes and observations (chat and adoption need a session's pane), when
 * each status began, and the Session built for each pane, reused while nothing it was built from
 * changed. When a read happens is `ModelReads`' decision.
 */
export class SessionModel {
  private readonly statusSince = new Map<string, { status: number; since: Date }>();
  private readonly sessionCache = new Map<string, CachedSession>();
  private readonly reads: ModelReads<SessionMap>;
  private panes = new Map<string, PaneInfo>();
  private observations = new Map<string, SessionObservation>();
  /** Per session (and its creation): the newest observation of an agent with its native log bound. */
  private readonly agentLogs = new Map<
    string,
    { readonly created: number; readonly observation: SessionObservation }
  >();
  /** The last lines of each dead pane, read once when it died (keyed by pane id and time of death). */
  private readonly endedLines = new Map<string, { readonly died: number; readonly lines: readonly string[] }>();
  private readonly deadPanes: DeadPanes;
  /** Every full read's `list-panes`, through one long-lived shell rather than a spawn each. */
  private readonly lister: PaneLister;

  constructor(private readonly options: SessionModelOptions) {
    this.deadPanes = new DeadPanes((paneId) => nudgeReaper(options.tmux, paneId));
    this.lister = new PaneLister(options.tmux);
    this.reads = new ModelReads({ read: (kind) => this.read(kind), live: options.live });
  }

  /** Stops what reads hold open (the pane lister's shell); later reads spawn tmux directly. */
  close(): void {
    this.lister.close();
  }

  /** The newest panes read, by session. */
  get lastPanes(): ReadonlyMap<string, PaneInfo> {
    return this.panes;
  }

  /** The newest status observations, by session. */
  get lastObservations(): ReadonlyMap<string, SessionObservation> {
    return this.observations;
  }

  /**
   * The last observation with a native log of the agent that ran in `tmuxName`, once no agent runs
   * there any more (its command exited: the pane is a shell, or dead); undefined while one runs.
   */
  pastAgent(tmuxName: string): SessionObservation | undefined {
    const now = this.observations.get(tmuxName);
    if (now?.chatLogPath) return undefined;
    const pane = this.panes.get(tmuxName);
    const past = this.agentLogs.get(tmuxName);
    return pane && past && past.created === pane.sessionCreated ? past.observation : undefined;
  }

  /** The model for an API read: the watch loop's while fresh, else a read. */
  current(): Promise<SessionMap> {
    return this.reads.current();
  }

  /**
   * Reads tmux and the native state now (the watch loop, and whoever must see tmux as it is this
   * moment); concurrent callers share one read, and a read never misses a change made before it.
   * `logs` reads the native state over the panes of the last full read, and leaves the screens' last
   * lines to the next full read.
   */
  refresh(kind: ReadKind = "full"): Promise<SessionMap> {
    return this.reads.refresh(kind);
  }

  /** The watch loop's look: a read that begins after any read in flight (ModelReads.next). */
  look(kind: ReadKind): Promise<SessionMap> {
    return this.reads.next(kind);
  }

  /** A change made through the API: later reads must see it. */
  changed(): void {
    this.reads.changed();
  }

  private async read(kind: ReadKind): Promise<SessionMap> {
    const full = kind === "full" || this.panes.size === 0;
    const panes = full ? activePanes(await this.lister.list()) : new Map(this.panes);
    await this.endings(panes);
    const [adopted, seen] = await Promise.all([this.options.marks.adopted(), this.options.marks.seen()]);
    const observations = await this.options.inspector.inspect(panes, seen);
    const gone = this.options.gone;
    if (gone) {
      await gone.update(this.vanished(panes), new Set(panes.keys()));
      const agents = [...panes.values()].flatMap((pane) => {
        const observation = observations.get(pane.sessionName);
        return observation?.chatLogPath ? [{ pane, observation }] : [];
      });
      // Through the lister's shell: a spawn from here would hold this thread (docs/status.md).
      if (full) await gone.noteLive(agents, (args) => this.lister.exec(args));
    }
    const model: SessionMap = new Map();
    const now = new Date();
    const built: Session[] = [...panes.keys()].map((name) =>
      this.toSession(panes.get(name) as PaneInfo, observations.get(name), adopted, now),
    );
    for (const session of gone?.sessions() ?? []) if (!panes.has(session.tmuxSession)) built.push(session);
    for (const session of built.sort((a, b) => (a.tmuxSession < b.tmuxSession ? -1 : 1))) {
      model.set(session.tmuxSession, session);
    }
    for (const name of this.statusSince.keys()) if (!panes.has(name)) this.statusSince.delete(name);
    for (const name of this.sessionCache.keys()) if (!panes.has(name)) this.sessionCache.delete(name);
    for (const [name, observation] of observations) {
      const pane = panes.get(name);
      if (pane && observation.chatLogPath) this.agentLogs.set(name, { created: pane.sessionCreated, observation });
    }
    for (const name of this.agentLogs.keys()) if (!panes.has(name)) this.agentLogs.delete(name);
    const paneIds = new Set([...panes.values()].map((p) => p.paneId));
    for (const id of this.endedLines.keys()) if (!paneIds.has(id)) this.endedLines.delete(id);
    this.options.workspace?.retain(
      new Set(
        [...panes.values()].filter((p) => !SYSTEM_SESSION_NAMES.has(p.sessionName)).map((p) => p.paneCurrentPath),
      ),
    );
    this.panes = panes;
    this.observations = observations;
    this.options.onRead(model);
    return model;
  }

  /** The sessions of the previous read tmux no longer has that ran an agent with its native log bound. */
  private vanished(panes: Map<string, PaneInfo>): LastSeen[] {
    const vanished: LastSeen[] = [];
    for (const [name, pane] of this.panes) {
      const past = this.agentLogs.get(name);
      const session = this.sessionCache.get(name)?.session;
      if (panes.has(name) || !past || !session || past.created !== pane.sessionCreated) continue;
      const end = pane.paneDead ? this.endedLines.get(pane.paneId) : undefined;
      vanished.push({ pane, session, observation: past.observation, died: end && { at: end.died, lines: end.lines } });
    }
    return vanished;
  }

  /**
   * Ended sessions (a dead pane): reads each one's last lines once, and removes those StarAgent
   * created that ended longer than keepEndedMs ago (from `panes` as well as from tmux).
   */
  private async endings(panes: Map<string, PaneInfo>): Promise<void> {
    const keepMs = this.options.keepEndedMs ?? DEFAULT_KEEP_ENDED_MS;
    const dead = new Set<string>();
    for (const [name, pane] of panes) {
      if (!pane.paneDead || SYSTEM_SESSION_NAMES.has(name)) continue;
      dead.add(pane.paneId);
      const died = await this.deadPanes.diedAt(pane);
      if (pane.sessionOrigin === "created" && Date.now() - died * 1000 >= keepMs) {
        panes.delete(name);
        this.options.gone?.expectStop(name);
        await killSession(this.options.tmux, name).catch(() => undefined);
        this.options.onEndedRemoved?.(name);
        continue;
      }
      if (this.endedLines.get(pane.paneId)?.died === died) continue;
      const text = await this.options.tmux
        .query(["capture-pane", "-p", "-J", "-S", `-${ENDED_CAPTURE_LINES}`, "-t", pane.paneId])
        .catch(() => "");
      const lines = text
        .split("\n")
        .map((l) => l.trimEnd())
        .filter((l) => l.trim() !== "" && !/^Pane is dead \(/.test(l));
      this.endedLines.set(pane.paneId, { died, lines: lines.slice(-ENDED_LAST_LINES) });
    }
    this.deadPanes.retain(dead);
  }

  private toSession(
    pane: PaneInfo,
    observation: SessionObservation | undefined,
    adopted: Map<string, number>,
    now: Date,
  ): Session {
    const name = pane.sessionName;
    const system = SYSTEM_SESSION_NAMES.has(name);
    const origin = system
      ? SessionOrigin.SYSTEM
      : pane.sessionOrigin === "created"
        ? SessionOrigin.CREATED
        : adopted.get(name) === pane.sessionCreated
          ? SessionOrigin.ADOPTED
          : SessionOrigin.UNMANAGED;
    const status = observation?.status ?? 0;
    let since = this.statusSince.get(name);
    if (!since || since.status !== status) {
      since = { status, since: now };
      this.statusSince.set(name, since);
    }
    // The same pane, observation, origin and status time make the same Session: reuse it, so an
    // unchanged session costs neither a new message nor a deep comparison in the fan-out.
    // Output moves the window's activity every second; the Session follows it in ACTIVITY_STEP_S steps.
    const activityS = pane.windowActivity - (pane.windowActivity % ACTIVITY_STEP_S);
    const workspace = system ? undefined : this.options.workspace?.lookup(pane.paneCurrentPath);
    const sessionKey = { tmuxSession: name, sessionCreated: pane.sessionCreated };
    const queued = this.options.queuedMessages?.(sessionKey) ?? 0;
    const worktree = this.options.worktree?.(sessionKey);
    const key = `${paneStamp(pane)}\0${origin}\0${status}\0${since.since.getTime()}\0${activityS}\0${queued}\0${worktree?.path ?? ""}\0${workspace?.changedFiles}\0${workspace?.branch}`;
    const cached = this.sessionCache.get(name);
    if (cached && cached.key === key && cached.observation === observation) return cached.session;
    // The pane's last output, or the CLI's log, whichever is newer; not tmux's session activity, which
    // attaching a viewer or pressing a key moves though the agent did nothing.
    const activityMs = Math.max(activityS * 1000, observation?.lastActivity?.getTime() ?? 0);
    const session = create(SessionSchema, {
      name: sessionResourceName(this.options.nodeName, name),
      node: this.options.nodeName,
      tmuxSession: name,
      type: system ? SessionType.SYSTEM : SessionType.AGENT,
      origin,
      cli: observation?.cli ?? Cli.OTHER,
      status: observation?.status,
      statusReason: observation?.reason,
      prompt: observation?.prompt ?? "",
      promptKind: observation?.promptKind,
      pendingPrompt: pendingPromptOf(observation),
      completionId: observation?.completionId ?? "",
      replyExcerpt: observation?.replyExcerpt ?? "",
      cwd: pane.paneCurrentPath,
      command: observation?.command ?? pane.paneCurrentCommand,
      createTime: timestampFromDate(new Date(pane.sessionCreated * 1000)),
      lastActivityTime: timestampFromDate(new Date(activityMs)),
      statusChangeTime: timestampFromDate(since.since),
      attachedClients: pane.sessionAttached,
      exitStatus: pane.commandExitStatus,
      paneTitle: pane.paneTitle,
      unmanageableReason: sessionNameProblem(name) ?? "",
      windowSize: { cols: pane.windowWidth, rows: pane.windowHeight },
      chatRevision: observation?.chatRevision ?? "",
      statusDetail: observation?.detail ?? "",
      changedFiles: workspace?.changedFiles,
      branch: workspace?.branch ?? "",
      queuedMessages: queued,
      worktree,
      usage: usageMessage(observation?.usage),
      supervision: system ? supervisionMessage(pane.supervision) : undefined,
      ended:
        pane.paneDead && !system
          ? create(SessionEndSchema, {
              endTime: timestampFromMs((this.endedLines.get(pane.paneId)?.died ?? 0) * 1000),
              exitStatus: pane.deadStatus,
              lastLines: [...(this.endedLines.get(pane.paneId)?.lines ?? [])],
            })
          : undefined,
    });
    this.sessionCache.set(name, { key, observation, session });
    return session;
  }
}

/**
 * `Session.pending_prompt`: set exactly when the status is an input prompt. A prompt its CLI's reader
 * could not read in full (a sessions file says "waiting" before the screen shows it) is its question
 * alone, marked truncated, with no choices and no fingerprint: nothing can answer it until it is read.
 */
function pendingPromptOf(observation: SessionObservation | undefined): PendingPrompt | undefined {
  if (observation?.reason !== StatusReason.INPUT_PROMPT) return undefined;
  return (
    observation.pendingPrompt ??
    create(PendingPromptSchema, { kind: observation.promptKind, question: observation.prompt, truncated: true })
  );
}

/** `Session.supervision` of a system session, from what its supervisor recorded in its pane. */
function supervisionMessage(record: SupervisionRecord | undefined): ServiceSupervision | undefined {
  if (!record) return undefined;
  const time = (ms: number | undefined) => (ms === undefined ? undefined : timestampFromMs(ms));
  return create(ServiceSupervisionSchema, {
    restarts: record.restarts,
    lastExitStatus: record.lastExitStatus,
    lastExitTime: time(record.lastExitAt),
    lastLines: [...(record.lastLines ?? [])],
    nextStartTime: time(record.nextStartAt),
  });
}
