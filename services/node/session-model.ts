import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Cli, type Session, SessionOrigin, SessionSchema, SessionType } from "../../gen/staragent/v1/session_pb.js";
import { SYSTEM_SESSION_NAMES, sessionNameProblem, sessionResourceName } from "../common/resource-names.js";
import { ModelReads } from "./model-reads.js";
import type { SessionInspector, SessionObservation } from "./status/observation.js";
import type { SessionMarks } from "./store/session-marks.js";
import type { TmuxClient } from "./tmux/client.js";
import { activePanes, listPanes, type PaneInfo, paneStamp } from "./tmux/panes.js";

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
}

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

  constructor(private readonly options: SessionModelOptions) {
    this.reads = new ModelReads({ read: () => this.read(), live: options.live });
  }

  /** The newest panes read, by session. */
  get lastPanes(): ReadonlyMap<string, PaneInfo> {
    return this.panes;
  }

  /** The newest status observations, by session. */
  get lastObservations(): ReadonlyMap<string, SessionObservation> {
    return this.observations;
  }

  /** The model for an API read: the watch loop's while fresh, else a read. */
  current(): Promise<SessionMap> {
    return this.reads.current();
  }

  /**
   * Reads tmux and the native state now (the watch loop, and whoever must see tmux as it is this
   * moment); concurrent callers share one read, and a read never misses a change made before it.
   */
  refresh(): Promise<SessionMap> {
    return this.reads.refresh();
  }

  /** A change made through the API: later reads must see it. */
  changed(): void {
    this.reads.changed();
  }

  private async read(): Promise<SessionMap> {
    const panes = activePanes(await listPanes(this.options.tmux));
    const [adopted, seen] = await Promise.all([this.options.marks.adopted(), this.options.marks.seen()]);
    const observations = await this.options.inspector.inspect(panes, seen);
    const model: SessionMap = new Map();
    const now = new Date();
    for (const name of [...panes.keys()].sort()) {
      model.set(name, this.toSession(panes.get(name) as PaneInfo, observations.get(name), adopted, now));
    }
    for (const name of this.statusSince.keys()) if (!panes.has(name)) this.statusSince.delete(name);
    for (const name of this.sessionCache.keys()) if (!panes.has(name)) this.sessionCache.delete(name);
    this.panes = panes;
    this.observations = observations;
    this.options.onRead(model);
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
    // unchanged session costs neither a new message nor a deep comparison in the fan-out.
    // Output moves the window's activity every second; the Session follows it in ACTIVITY_STEP_S steps.
    const activityS = pane.windowActivity - (pane.windowActivity % ACTIVITY_STEP_S);
    const key = `${paneStamp(pane)}\0${origin}\0${status}\0${since.since.getTime()}\0${activityS}`;
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
      completionId: observation?.completionId ?? "",
      cwd: pane.paneCurrentPath,
      command: observation?.command ?? pane.paneCurrentCommand,
      createTime: timestampFromDate(new Date(pane.sessionCreated * 1000)),
      lastActivityTime: timestampFromDate(new Date(activityMs)),
      statusChangeTime: timestampFromDate(since.since),
      attachedClients: pane.sessionAttached,
      paneTitle: pane.paneTitle,
      unmanageableReason: sessionNameProblem(name) ?? "",
      windowSize: { cols: pane.windowWidth, rows: pane.windowHeight },
      chatRevision: observation?.chatRevision ?? "",
      statusDetail: observation?.detail ?? "",
    });
    this.sessionCache.set(name, { key, observation, session });
    return session;
  }
}
