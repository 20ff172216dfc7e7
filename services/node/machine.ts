import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type AdoptableSession,
  AdoptableSessionSchema,
  type Session,
  SessionOrigin,
} from "../../gen/staragent/v1/session_pb.js";
import type { WatchSessionsResponse } from "../../gen/staragent/v1/session_service_pb.js";
import type { Logger } from "../common/log.js";
import { sessionResourceName } from "../common/resource-names.js";
import { conversationLogKey } from "./agents/conversations.js";
import { type AgentRegistry, createBuiltInAgents } from "./agents/registry.js";
import { expandHome, validateCommand, validateCwd, validateNewSessionId } from "./create-session-input.js";
import { GoneSessions } from "./gone-sessions.js";
import type { SessionContext, SessionLookup } from "./session-lookup.js";
import { DEFAULT_KEEP_ENDED_MS, SessionModel } from "./session-model.js";
import {
  checkStoppable,
  completionToMark,
  createFailure,
  exitedAtOnce,
  needsAdoption,
  sessionNotFound,
} from "./session-requests.js";
import type { SessionInspector, SessionObservation } from "./status/observation.js";
import { WatchLoop } from "./status/watch-loop.js";
import { SessionMarks } from "./store/session-marks.js";
import type { StateFiles } from "./store/state-files.js";
import { type TmuxClient, TmuxError } from "./tmux/client.js";
import { TmuxServerProbe } from "./tmux/server-probe.js";
import { killSession, newSession } from "./tmux/sessions.js";
import { WatchFanout } from "./watch-fanout.js";
import { GitShellPool } from "./workspace/git.js";
import { WorkspaceTracker } from "./workspace/tracker.js";
import type { SessionWorktrees } from "./worktrees/session-worktrees.js";
import type { AddedWorktree, WorktreeRequest } from "./worktrees/worktrees.js";

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
  /** Queued chat messages of a session not typed yet (`Session.queued_messages`). */
  readonly queuedMessages?: (key: { tmuxSession: string; sessionCreated: number }) => number;
  /** The git worktrees made for sessions; without it, CreateSession refuses `worktree`. */
  readonly worktrees?: SessionWorktrees;
  /** How long an ended session StarAgent created stays listed (SessionModelOptions.keepEndedMs). */
  readonly keepEndedMs?: number;
}

/** What CreateSession asks for, already parsed out of the request. */
export interface CreateSessionInput {
  readonly sessionId: string;
  readonly cwd: string;
  readonly command: readonly string[];
  /** Start on a new git worktree of the repository `cwd` is in. */
  readonly worktree?: WorktreeRequest;
}

/**
 * One machine's sessions and every operation on them. Both the Node server and the Hub (for its own
 * machine) run one. tmux is the source of truth: every model is read from `list-panes` (the session
 * model); the only sessions kept that tmux does not have are those that went outside StarAgent with an
 * agent's log bound, listed as ended for the keep time (gone-sessions.ts). While anyone watches, the watch loop
 * keeps the model fresh and reads are answered from it; changes made here refresh first.
 */
export class Machine implements SessionLookup {
  private readonly model: SessionModel;
  private readonly fanout: WatchFanout;
  private readonly loop: WatchLoop;
  private readonly marks: SessionMarks;
  private readonly workspaces: WorkspaceTracker;
  /** How the workspace API's calls run git: through long-lived shells, not a spawn each. */
  readonly git = new GitShellPool();
  private readonly gone: GoneSessions;

  /** The CLIs this machine supports; it closes what they hold open when it stops. */
  readonly agents: AgentRegistry;

  constructor(private readonly options: MachineOptions) {
    this.agents = options.agents ?? createBuiltInAgents();
    this.marks = new SessionMarks(options.state);
    this.fanout = new WatchFanout(options.nodeName);
    this.workspaces = new WorkspaceTracker(() => this.changed(), options.log.child("workspace"));
    this.gone = new GoneSessions(options.state.gone, options.tmux, () => options.keepEndedMs ?? DEFAULT_KEEP_ENDED_MS);
    this.model = new SessionModel({
      nodeName: options.nodeName,
      tmux: options.tmux,
      inspector: options.inspector,
      marks: this.marks,
      live: () => this.loop.isRunning && this.fanout.size > 0,
      onRead: (model) => this.fanout.publish(model),
      workspace: this.workspaces,
      queuedMessages: options.queuedMessages,
      worktree: (key) => options.worktrees?.of(key),
      keepEndedMs: options.keepEndedMs,
      onEndedRemoved: (session) => options.log.info("ended session removed after its keep time", { session }),
      gone: this.gone,
    });
    this.loop = new WatchLoop({
      inspector: options.inspector,
      probe: new TmuxServerProbe(options.tmux),
      read: (kind) => this.model.look(kind),
      model: () => this.fanout.latest,
      hasPanes: () => this.model.lastPanes.size > 0,
      watched: () => this.fanout.size > 0,
      heartbeat: () => this.fanout.heartbeat(),
      log: options.log,
    });
  }

  get nodeName(): string {
    return this.options.nodeName;
  }

  /** Every session, ordered by name: the watch loop's model while it is fresh, else read from tmux. */
  async listSessions(): Promise<Session[]> {
    return [...(await this.model.current()).values()];
  }

  /** One session by tmux name; NOT_FOUND when tmux has no such session. */
  async getSession(tmuxName: string): Promise<Session> {
    // A session the model does not have yet may have been started by hand since: tmux says.
    const session = (await this.model.current()).get(tmuxName) ?? (await this.model.refresh()).get(tmuxName);
    if (!session) throw sessionNotFound(this.options.nodeName, tmuxName);
    return session;
  }

  /** Starts a session (docs/architecture.md, "Flows"); the answer is read from tmux after the start. */
  async createSession(input: CreateSessionInput): Promise<Session> {
    validateNewSessionId(input.sessionId);
    const cwd = expandHome(input.cwd);
    await validateCwd(cwd);
    validateCommand(input.command);
    const worktree = input.worktree ? await this.addWorktree(input) : undefined;
    try {
      await newSession(this.options.tmux, {
        name: input.sessionId,
        cwd: worktree?.sessionCwd ?? cwd,
        command: input.command,
        origin: "created",
        keepPane: true,
      });
    } catch (err) {
      if (worktree) await this.options.worktrees?.undo(worktree).catch(() => undefined);
      throw createFailure(err, input.sessionId);
    }
    this.options.log.info("session created", { session: input.sessionId, worktree: worktree?.path });
    this.changed();
    const session = (await this.model.refresh()).get(input.sessionId);
    if (!session) {
      if (worktree) await this.options.worktrees?.undo(worktree).catch(() => undefined);
      throw exitedAtOnce(input.sessionId);
    }
    if (!worktree) return session;
    await this.options.worktrees?.record(worktreeKey(session), worktree);
    this.changed();
    return (await this.model.refresh()).get(input.sessionId) ?? session;
  }

  private async addWorktree(input: CreateSessionInput): Promise<AddedWorktree> {
    const worktrees = this.options.worktrees;
    if (!worktrees) throw new ConnectError("worktree: not available on this node", Code.Unimplemented);
    if ((await this.model.current()).has(input.sessionId)) {
      throw new ConnectError(`session_id: a session named ${input.sessionId} exists already`, Code.AlreadyExists);
    }
    return worktrees.add(input.cwd, input.worktree as WorktreeRequest);
  }

  /** Stops a session: created ones always, adopted and unmanaged with `force`, system never. */
  async stopSession(tmuxName: string, force: boolean, removeWorktree = false): Promise<void> {
    const stopping = await this.getSession(tmuxName);
    // A session that went outside StarAgent and is kept as ended: dismissed, nothing to kill.
    if (!this.model.lastPanes.has(tmuxName) && (await this.gone.dismiss(tmuxName))) {
      this.options.log.info("gone session dismissed", { session: tmuxName });
      this.changed();
      return;
    }
    checkStoppable(stopping, force);
    if (removeWorktree) {
      if (!this.options.worktrees)
        throw new ConnectError("remove_worktree: not available on this node", Code.Unimplemented);
      await this.options.worktrees.checkRemovable(worktreeKey(stopping));
    }
    // The bookkeeping first: nothing is killed unless it can be written (a read-only home refuses).
    const forgotten = await this.marks.forgetAdopted(tmuxName);
    this.gone.expectStop(tmuxName);
    try {
      await killSession(this.options.tmux, tmuxName);
    } catch (err) {
      this.gone.stopFailed(tmuxName);
      if (err instanceof TmuxError && err.isNotFound) {
        this.changed();
        throw sessionNotFound(this.options.nodeName, tmuxName);
      }
      if (forgotten) await this.marks.adopt(forgotten).catch(() => undefined);
      throw err;
    }
    this.options.log.info("session stopped", { session: tmuxName, force });
    this.changed();
    await this.options.worktrees?.stopped(worktreeKey(stopping), removeWorktree).catch((err: unknown) => {
      throw new ConnectError(
        `${tmuxName} was stopped, but its worktree was not removed: ${err instanceof ConnectError ? err.rawMessage : err}`,
        Code.FailedPrecondition,
      );
    });
  }

  /**
   * Sessions running a supported CLI that StarAgent neither created nor adopted. Read from tmux now,
   * not from the watch loop's model: a person looks for an agent they have just started by hand, which
   * the model may not hold yet.
   */
  async listAdoptable(): Promise<AdoptableSession[]> {
    const sessions = [...(await this.model.refresh()).values()];
    return sessions
      .filter((s) => s.origin === SessionOrigin.UNMANAGED && this.agents.adoptable(s.cli))
      .map((s) =>
        create(AdoptableSessionSchema, {
          name: s.name,
          tmuxSession: s.tmuxSession,
          cli: s.cli,
          cwd: s.cwd,
          command: s.command,
          paneId: this.model.lastPanes.get(s.tmuxSession)?.paneId ?? "",
        }),
      );
  }

  /** Records an unmanaged session as adopted; the tmux session is not touched. Idempotent. */
  async adoptSession(tmuxName: string): Promise<Session> {
    const session = await this.getSession(tmuxName);
    if (!needsAdoption(session)) return session;
    const pane = this.model.lastPanes.get(tmuxName);
    if (!pane) throw sessionNotFound(this.options.nodeName, tmuxName);
    await this.marks.adopt({
      tmuxSession: tmuxName,
      sessionCreated: pane.sessionCreated,
      adoptTime: new Date().toISOString(),
      cli: this.agents.nameOf(session.cli),
    });
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
    const newest = completionToMark(session, completionId);
    if (newest === undefined) return session;
    await this.marks.markSeen(tmuxName, newest);
    this.changed();
    return this.getSession(tmuxName);
  }

  /**
   * Streams a snapshot, then changes, until `signal` aborts. All watchers share one loop, which runs
   * only while someone watches.
   */
  async *watch(signal: AbortSignal): AsyncGenerator<WatchSessionsResponse> {
    const model = await this.model.current();
    yield* this.fanout.stream(model, signal, () => this.loop.start());
  }

  /** A session's pane and observation as of the newest read (chat), with a fresh read on demand. */
  sessionContext(tmuxName: string): SessionContext | undefined {
    const pane = this.model.lastPanes.get(tmuxName);
    if (!pane) return undefined;
    return {
      pane,
      observation: this.model.lastObservations.get(tmuxName),
      pastAgent: this.model.pastAgent(tmuxName),
      fresh: async () => {
        await this.model.refresh();
        return this.model.lastObservations.get(tmuxName);
      },
    };
  }

  /** The agent of a session that went outside StarAgent and is kept as ended, for its chat. */
  goneAgent(tmuxName: string): SessionObservation | undefined {
    return this.model.lastPanes.has(tmuxName) ? undefined : this.gone.observation(tmuxName);
  }

  /** The native logs live sessions' CLIs are bound to, as of a current read: log path → session name. */
  async boundLogs(): Promise<Map<string, string>> {
    await this.model.current();
    const logs = new Map<string, string>();
    for (const [name, observation] of this.model.lastObservations) {
      const path = observation.chatLogPath ?? "";
      if (path !== "") {
        logs.set(
          conversationLogKey(path, observation.chatLogSession),
          sessionResourceName(this.options.nodeName, name),
        );
      }
    }
    return logs;
  }

  /** Stops the watch loop and ends every watch stream. */
  async close(): Promise<void> {
    const loop = this.loop.close();
    this.workspaces.close();
    this.git.close();
    this.fanout.closeAll();
    await loop;
    this.model.close();
    this.agents.close();
  }

  /** Something a Session is built from changed outside tmux (a queued message): read again, tell watchers. */
  noteChange(): void {
    this.changed();
  }

  /** A change made through the API: later reads must see it, and watchers hear of it now. */
  private changed(): void {
    this.model.changed();
    this.loop.wake();
  }
}

/** A session as the worktree records name it: its tmux name and creation time. */
function worktreeKey(session: Session): { tmuxSession: string; sessionCreated: number } {
  return { tmuxSession: session.tmuxSession, sessionCreated: Number(session.createTime?.seconds ?? 0n) };
}
