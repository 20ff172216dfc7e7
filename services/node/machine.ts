import { create, equals } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type AdoptableSession,
  AdoptableSessionSchema,
  Cli,
  type Session,
  SessionOrigin,
  SessionSchema,
  SessionType,
} from "../../gen/staragent/v1/session_pb.js";
import {
  WatchEventType,
  type WatchSessionsResponse,
  WatchSessionsResponseSchema,
} from "../../gen/staragent/v1/session_service_pb.js";
import { AsyncQueue, sleep } from "../common/async-queue.js";
import type { Logger } from "../common/log.js";
import { SYSTEM_SESSION_NAMES, sessionResourceName } from "../common/resource-names.js";
import { type AgentRegistry, createBuiltInAgents } from "./agents/registry.js";
import { validateCommand, validateCwd, validateNewSessionId } from "./create-session-input.js";
import { ModelReads } from "./model-reads.js";
import type { SessionInspector, SessionObservation } from "./status/observation.js";
import type { AdoptedSession, StateFiles } from "./store/state-files.js";
import { type TmuxClient, TmuxError } from "./tmux/client.js";
import { activePanes, listPanes, type PaneInfo, paneStamp } from "./tmux/panes.js";
import { TmuxServerProbe } from "./tmux/server-probe.js";
import { killSession, newSession } from "./tmux/sessions.js";

/**
 * How often the watch loop looks at tmux and the native logs while anyone watches and a session's
 * status can change with nothing but time or the screen (a turn running, a prompt shown, a CLI without
 * a log yet): no file event reports those.
 */
export const WATCH_INTERVAL_MS = 250;
/**
 * How often it looks while every session is settled (idle or completed CLIs, shells). Native log
 * writes wake it at once through file watches, and panes created or ended through a `/proc` probe
 * every WATCH_INTERVAL_MS, so this bounds only how late other tmux-only changes are seen (a shell
 * command starting or ending, a rename, a title). Each look spawns one `tmux list-panes` (about 15 ms
 * of CPU over node, the tmux client and the server with 100 panes): most of an idle machine's cost.
 */
export const WATCH_IDLE_INTERVAL_MS = 2_000;
/**
 * Least time between two looks of the watch loop: a CLI writing its log many times a second costs at
 * most this many reads, and a change waits at most this long for the next look.
 */
const WATCH_MIN_GAP_MS = 50;
/** How long a quiet watch stream waits before sending a heartbeat, so proxies keep it open. */
export const WATCH_HEARTBEAT_MS = 15_000;
/** Events a slow watcher may have queued before it is cut off (it reconnects and gets a snapshot). */
const MAX_QUEUED_WATCH_EVENTS = 1_000;

/** What a Machine is built from. */
export interface MachineOptions {
  /** The node id this machine answers as (`local` on a Hub). */
  readonly nodeName: string;
  readonly tmux: TmuxClient;
  readonly state: StateFiles;
  readonly inspector: SessionInspector;
  readonly log: Logger;
  /** The supported CLIs (adoptable ones, filter names); default: the built-in ones. */
  readonly agents?: AgentRegistry;
}

/** What CreateSession asks for, already parsed out of the request. */
export interface CreateSessionInput {
  readonly sessionId: string;
  readonly cwd: string;
  readonly command: readonly string[];
}

/**
 * One machine's sessions: the in-memory model over tmux and the native logs, and every operation on
 * them. Both the Node server and the Hub (for its own machine) run one. tmux is the source of truth:
 * every model is read from `list-panes`, and nothing here keeps sessions tmux does not have. While the
 * watch loop runs, reads are answered from its model (`model-reads.ts`); changes made here refresh first.
 */
export class Machine {
  private readonly statusSince = new Map<string, { status: number; since: Date }>();
  private readonly watchers = new Set<AsyncQueue<WatchSessionsResponse>>();
  private model: Map<string, Session> | undefined;
  private loop: Promise<void> | undefined;
  private readonly loopStop = new AbortController();
  private poke: (() => void) | undefined;
  /** Set by `wake` so a wake that comes while a look runs is not lost. */
  private woken = false;
  private readonly sessionCache = new Map<
    string,
    { readonly key: string; readonly observation: SessionObservation | undefined; readonly session: Session }
  >();
  private adoptedCache: Map<string, number> | undefined;
  private seenCache: Map<string, string> | undefined;

  private readonly probe: TmuxServerProbe;
  private readonly reads: ModelReads<Map<string, Session>>;

  /** The CLIs this machine supports; it closes what they hold open when it stops. */
  readonly agents: AgentRegistry;

  constructor(private readonly options: MachineOptions) {
    this.agents = options.agents ?? createBuiltInAgents();
    this.probe = new TmuxServerProbe(options.tmux);
    this.reads = new ModelReads({
      read: () => this.readModel(),
      live: () => this.loop !== undefined && this.watchers.size > 0,
    });
  }

  get nodeName(): string {
    return this.options.nodeName;
  }

  /** Every session, ordered by name: the watch loop's model while it is fresh, else read from tmux. */
  async listSessions(): Promise<Session[]> {
    const model = await this.reads.current();
    return [...model.values()];
  }

  /** One session by tmux name; NOT_FOUND when tmux has no such session. */
  async getSession(tmuxName: string): Promise<Session> {
    // A session the model does not have yet may have been started by hand since: tmux says.
    const session = (await this.reads.current()).get(tmuxName) ?? (await this.refresh()).get(tmuxName);
    if (!session) throw notFound(this.options.nodeName, tmuxName);
    return session;
  }

  /** Starts a session (DESIGN.md §8). */
  async createSession(input: CreateSessionInput): Promise<Session> {
    validateNewSessionId(input.sessionId);
    await validateCwd(input.cwd);
    validateCommand(input.command);
    try {
      await newSession(this.options.tmux, {
        name: input.sessionId,
        cwd: input.cwd,
        command: input.command,
        origin: "created",
      });
    } catch (err) {
      if (err instanceof TmuxError && /duplicate session/i.test(err.stderr)) {
        throw new ConnectError(`session_id: a session named ${input.sessionId} already exists`, Code.AlreadyExists);
      }
      if (err instanceof TmuxError && err.isNotFound) {
        throw new ConnectError(
          `the command of ${input.sessionId} exited at once, so the session ended: check the command and cwd`,
          Code.FailedPrecondition,
        );
      }
      throw err;
    }
    this.options.log.info("session created", { session: input.sessionId });
    this.changed();
    const session = (await this.refresh()).get(input.sessionId);
    if (!session) {
      throw new ConnectError(
        `the command of ${input.sessionId} exited at once, so the session ended: check the command and cwd`,
        Code.FailedPrecondition,
      );
    }
    return session;
  }

  /** Stops a session: created ones always, adopted and unmanaged with `force`, system never. */
  async stopSession(tmuxName: string, force: boolean): Promise<void> {
    const session = await this.getSession(tmuxName);
    if (session.type === SessionType.SYSTEM) {
      throw new ConnectError(
        `${tmuxName} is a StarAgent system session and is never stopped through the API; stop it on its machine`,
        Code.FailedPrecondition,
      );
    }
    if (session.origin !== SessionOrigin.CREATED && !force) {
      const what = session.origin === SessionOrigin.ADOPTED ? "was adopted" : "was not created by StarAgent";
      throw new ConnectError(`${tmuxName} ${what}; stop it with force to kill it anyway`, Code.FailedPrecondition);
    }
    // The bookkeeping first: nothing is killed unless it can be written (a read-only home refuses).
    const forgotten = await this.forgetAdopted(tmuxName);
    try {
      await killSession(this.options.tmux, tmuxName);
    } catch (err) {
      if (err instanceof TmuxError && err.isNotFound) {
        this.changed();
        throw notFound(this.options.nodeName, tmuxName);
      }
      if (forgotten) await this.rememberAdopted(forgotten).catch(() => undefined);
      throw err;
    }
    this.options.log.info("session stopped", { session: tmuxName, force });
    this.changed();
  }

  /**
   * Sessions running a supported CLI that StarAgent neither created nor adopted. Read from tmux now,
   * not the watch loop's model: the person asking has usually just started the CLI by hand.
   */
  async listAdoptable(): Promise<AdoptableSession[]> {
    const sessions = [...(await this.refresh()).values()];
    return sessions
      .filter((s) => s.origin === SessionOrigin.UNMANAGED && this.agents.adoptable(s.cli))
      .map((s) =>
        create(AdoptableSessionSchema, {
          name: s.name,
          tmuxSession: s.tmuxSession,
          cli: s.cli,
          cwd: s.cwd,
          command: s.command,
          paneId: this.lastPanes.get(s.tmuxSession)?.paneId ?? "",
        }),
      );
  }

  /** Records an unmanaged session as adopted; the tmux session is not touched. Idempotent. */
  async adoptSession(tmuxName: string): Promise<Session> {
    const session = await this.getSession(tmuxName);
    if (session.origin === SessionOrigin.ADOPTED) return session;
    if (session.origin === SessionOrigin.SYSTEM) {
      throw new ConnectError(`${tmuxName} is a system session and cannot be adopted`, Code.FailedPrecondition);
    }
    if (session.origin === SessionOrigin.CREATED) {
      throw new ConnectError(`${tmuxName} was created by StarAgent; it needs no adoption`, Code.FailedPrecondition);
    }
    const pane = this.lastPanes.get(tmuxName);
    if (!pane) throw notFound(this.options.nodeName, tmuxName);
    await this.options.state.adopted.update((file) => ({
      ...file,
      sessions: [
        ...file.sessions.filter((s) => s.tmuxSession !== tmuxName),
        {
          tmuxSession: tmuxName,
          sessionCreated: pane.sessionCreated,
          adoptTime: new Date().toISOString(),
          cli: Cli[session.cli]?.toLowerCase() ?? "",
        },
      ],
    }));
    this.adoptedCache = undefined;
    this.options.log.info("session adopted", { session: tmuxName });
    this.changed();
    return this.getSession(tmuxName);
  }

  /**
   * Marks the session's newest completion seen. `completionId` "" means the newest; a different id
   * than the newest is FAILED_PRECONDITION (the viewer saw an older turn).
   */
  async markSeen(tmuxName: string, completionId: string): Promise<Session> {
    const session = await this.getSession(tmuxName);
    const newest = session.completionId;
    if (newest === "") {
      if (completionId === "") return session;
      throw new ConnectError(`completion_id: ${tmuxName} has no completed turn`, Code.FailedPrecondition);
    }
    if (completionId !== "" && completionId !== newest) {
      throw new ConnectError(
        `completion_id: ${completionId} is not the newest completion of ${tmuxName} (${newest}); reload and try again`,
        Code.FailedPrecondition,
      );
    }
    await this.options.state.seen.update((file) => ({
      ...file,
      seen: [
        ...file.seen.filter((e) => e.tmuxSession !== tmuxName),
        { tmuxSession: tmuxName, completionId: newest, seenTime: new Date().toISOString() },
      ],
    }));
    this.seenCache = undefined;
    this.changed();
    return this.getSession(tmuxName);
  }

  /**
   * Streams a snapshot, then changes, until `signal` aborts. All watchers share one loop, which runs
   * only while someone watches.
   */
  async *watch(signal: AbortSignal): AsyncGenerator<WatchSessionsResponse> {
    const queue = new AsyncQueue<WatchSessionsResponse>();
    const model = await this.reads.current();
    queue.push(create(WatchSessionsResponseSchema, { type: WatchEventType.SNAPSHOT, sessions: [...model.values()] }));
    this.watchers.add(queue);
    this.startLoop();
    const onAbort = () => queue.close();
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      yield* queue;
    } finally {
      signal.removeEventListener("abort", onAbort);
      this.watchers.delete(queue);
    }
  }

  /** Stops the watch loop and ends every watch stream. */
  async close(): Promise<void> {
    this.loopStop.abort();
    for (const queue of this.watchers) queue.close();
    this.wake();
    await this.loop;
    this.agents.close();
  }

  /** The newest panes read, by session: the terminal and chat code use them to find a session's pane. */
  get lastPanes(): ReadonlyMap<string, PaneInfo> {
    return this.panes;
  }

  private panes = new Map<string, PaneInfo>();
  private observations = new Map<string, SessionObservation>();

  /** The newest status observations, by session (chat confirmation reads `lastUserTurn` from them). */
  get lastObservations(): ReadonlyMap<string, SessionObservation> {
    return this.observations;
  }
  /**
   * Reads tmux and the native state now (the watch loop, and whoever must see tmux as it is this
   * moment); concurrent callers share one read, and a read never misses a change made here before it.
   */
  refresh(): Promise<Map<string, Session>> {
    return this.reads.refresh();
  }

  private async readModel(): Promise<Map<string, Session>> {
    const panes = activePanes(await listPanes(this.options.tmux));
    const [adopted, seen] = await Promise.all([this.adopted(), this.seen()]);
    const observations = await this.options.inspector.inspect(panes, seen);
    const names = [...panes.keys()].sort();
    const model = new Map<string, Session>();
    const now = new Date();
    for (const name of names) {
      const pane = panes.get(name) as PaneInfo;
      const observation = observations.get(name);
      model.set(name, this.toSession(pane, observation, adopted, now));
    }
    for (const name of this.statusSince.keys()) if (!panes.has(name)) this.statusSince.delete(name);
    for (const name of this.sessionCache.keys()) if (!panes.has(name)) this.sessionCache.delete(name);
    this.panes = panes;
    this.observations = observations;
    this.publish(model);
    return model;
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
    // unchanged session costs neither a new message nor a deep comparison in publish.
    const key = `${paneStamp(pane)}\0${origin}\0${status}\0${since.since.getTime()}`;
    const cached = this.sessionCache.get(name);
    if (cached && cached.key === key && cached.observation === observation) return cached.session;
    const activityMs = Math.max(pane.sessionActivity * 1000, observation?.lastActivity?.getTime() ?? 0);
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
      completionId: observation?.completionId ?? "",
      cwd: pane.paneCurrentPath,
      command: observation?.command ?? pane.paneCurrentCommand,
      createTime: timestampFromDate(new Date(pane.sessionCreated * 1000)),
      lastActivityTime: timestampFromDate(new Date(activityMs)),
      statusChangeTime: timestampFromDate(since.since),
      attachedClients: pane.sessionAttached,
      paneTitle: pane.paneTitle,
      windowSize: { cols: pane.windowWidth, rows: pane.windowHeight },
      chatRevision: observation?.chatRevision ?? "",
      statusDetail: observation?.detail ?? "",
    });
    this.sessionCache.set(name, { key, observation, session });
    return session;
  }

  private publish(model: Map<string, Session>): void {
    const previous = this.model;
    this.model = model;
    if (!previous || this.watchers.size === 0) return;
    const upserted: Session[] = [];
    for (const [name, session] of model) {
      const before = previous.get(name);
      if (!before || (before !== session && !equals(SessionSchema, before, session))) upserted.push(session);
    }
    const removed = [...previous.keys()]
      .filter((name) => !model.has(name))
      .map((name) => sessionResourceName(this.options.nodeName, name));
    const events: WatchSessionsResponse[] = [];
    if (upserted.length > 0)
      events.push(create(WatchSessionsResponseSchema, { type: WatchEventType.UPSERTED, sessions: upserted }));
    if (removed.length > 0)
      events.push(create(WatchSessionsResponseSchema, { type: WatchEventType.REMOVED, removedNames: removed }));
    this.broadcast(events);
  }

  private broadcast(events: WatchSessionsResponse[]): void {
    for (const queue of this.watchers) {
      if (queue.size > MAX_QUEUED_WATCH_EVENTS) {
        queue.fail(
          new ConnectError("watcher fell too far behind; watch again for a fresh snapshot", Code.ResourceExhausted),
        );
        this.watchers.delete(queue);
        continue;
      }
      for (const event of events) queue.push(event);
    }
  }

  private startLoop(): void {
    if (this.loop) return;
    this.loop = (async () => {
      let quietSince = Date.now();
      // Native state changes wake the loop at once while it runs; nothing is watched once it stops.
      const unwatch = this.options.inspector.watchChanges?.(() => this.wake());
      while (!this.loopStop.signal.aborted && this.watchers.size > 0) {
        const startedAt = Date.now();
        this.woken = false;
        const before = this.model;
        try {
          await this.probe.mark(this.panes.size > 0);
          await this.refresh();
        } catch (err) {
          this.options.log.warn("watch loop could not read tmux", {
            error: err instanceof Error ? err.message : String(err),
          });
        }
        if (this.model !== before && this.model && before && !sameModel(before, this.model)) quietSince = Date.now();
        if (Date.now() - quietSince >= WATCH_HEARTBEAT_MS) {
          this.broadcast([create(WatchSessionsResponseSchema, { type: WatchEventType.HEARTBEAT })]);
          quietSince = Date.now();
        }
        const fast = this.options.inspector.needsFastPoll ?? true;
        const nextLook = startedAt + (fast ? WATCH_INTERVAL_MS : WATCH_IDLE_INTERVAL_MS);
        // Until the next look: a wake (file written, API change) looks at once; between idle looks a
        // `/proc` read every WATCH_INTERVAL_MS notices panes created or ended.
        while (!this.woken && !this.loopStop.signal.aborted) {
          const wait = Math.min(nextLook, Date.now() + WATCH_INTERVAL_MS) - Date.now();
          if (wait <= 0) break;
          await this.pause(wait);
          if (!this.woken && Date.now() < nextLook && (await this.probe.changed())) break;
        }
        const gap = startedAt + WATCH_MIN_GAP_MS - Date.now();
        if (gap > 0) await sleep(gap, this.loopStop.signal);
      }
      unwatch?.();
      this.loop = undefined;
    })();
  }

  /** A change made through the API: later reads must see it, and watchers hear of it now. */
  private changed(): void {
    this.reads.changed();
    this.wake();
  }

  /** Makes the watch loop look again now (a change this process made, or a native state file written). */
  private wake(): void {
    this.woken = true;
    this.poke?.();
  }

  /** Waits `ms`, or less when woken or closed. */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const signal = this.loopStop.signal;
      if (signal.aborted) return resolve();
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        this.poke = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener("abort", done, { once: true });
      this.poke = done;
    });
  }

  private async adopted(): Promise<Map<string, number>> {
    if (!this.adoptedCache) {
      const file = await this.options.state.adopted.read();
      this.adoptedCache = new Map(file.sessions.map((s) => [s.tmuxSession, s.sessionCreated]));
    }
    return this.adoptedCache;
  }

  private async seen(): Promise<Map<string, string>> {
    if (!this.seenCache) {
      const file = await this.options.state.seen.read();
      this.seenCache = new Map(file.seen.map((e) => [e.tmuxSession, e.completionId]));
    }
    return this.seenCache;
  }

  /** Removes a session's adoption record; returns it (to restore it if the stop fails), if any. */
  private async forgetAdopted(tmuxName: string): Promise<AdoptedSession | undefined> {
    const adopted = await this.adopted();
    if (!adopted.has(tmuxName)) return undefined;
    let removed: AdoptedSession | undefined;
    await this.options.state.adopted.update((file) => {
      removed = file.sessions.find((s) => s.tmuxSession === tmuxName);
      return { ...file, sessions: file.sessions.filter((s) => s.tmuxSession !== tmuxName) };
    });
    this.adoptedCache = undefined;
    return removed;
  }

  private async rememberAdopted(entry: AdoptedSession): Promise<void> {
    await this.options.state.adopted.update((file) => ({
      ...file,
      sessions: [...file.sessions.filter((s) => s.tmuxSession !== entry.tmuxSession), entry],
    }));
    this.adoptedCache = undefined;
  }
}

function sameModel(a: Map<string, Session>, b: Map<string, Session>): boolean {
  if (a.size !== b.size) return false;
  for (const [name, session] of a) {
    const other = b.get(name);
    if (!other || (other !== session && !equals(SessionSchema, session, other))) return false;
  }
  return true;
}

function notFound(node: string, tmuxName: string): ConnectError {
  return new ConnectError(`session ${sessionResourceName(node, tmuxName)} not found`, Code.NotFound);
}
