import { create } from "@bufbuild/protobuf";
import {
  type AdoptableSession,
  AdoptableSessionSchema,
  Cli,
  type Session,
  SessionOrigin,
} from "../../gen/staragent/v1/session_pb.js";
import type { WatchSessionsResponse } from "../../gen/staragent/v1/session_service_pb.js";
import type { Logger } from "../common/log.js";
import { type AgentRegistry, createBuiltInAgents } from "./agents/registry.js";
import { validateCommand, validateCwd, validateNewSessionId } from "./create-session-input.js";
import type { SessionContext, SessionLookup } from "./session-lookup.js";
import { SessionModel } from "./session-model.js";
import {
  checkStoppable,
  completionToMark,
  createFailure,
  exitedAtOnce,
  needsAdoption,
  sessionNotFound,
} from "./session-requests.js";
import type { SessionInspector } from "./status/observation.js";
import { WatchLoop } from "./status/watch-loop.js";
import { SessionMarks } from "./store/session-marks.js";
import type { StateFiles } from "./store/state-files.js";
import { type TmuxClient, TmuxError } from "./tmux/client.js";
import { TmuxServerProbe } from "./tmux/server-probe.js";
import { killSession, newSession } from "./tmux/sessions.js";
import { WatchFanout } from "./watch-fanout.js";

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
 * One machine's sessions and every operation on them. Both the Node server and the Hub (for its own
 * machine) run one. tmux is the source of truth: every model is read from `list-panes` (the session
 * model), and nothing here keeps sessions tmux does not have. While anyone watches, the watch loop
 * keeps the model fresh and reads are answered from it; changes made here refresh first.
 */
export class Machine implements SessionLookup {
  private readonly model: SessionModel;
  private readonly fanout: WatchFanout;
  private readonly loop: WatchLoop;
  private readonly marks: SessionMarks;

  /** The CLIs this machine supports; it closes what they hold open when it stops. */
  readonly agents: AgentRegistry;

  constructor(private readonly options: MachineOptions) {
    this.agents = options.agents ?? createBuiltInAgents();
    this.marks = new SessionMarks(options.state);
    this.fanout = new WatchFanout(options.nodeName);
    this.model = new SessionModel({
      nodeName: options.nodeName,
      tmux: options.tmux,
      inspector: options.inspector,
      marks: this.marks,
      live: () => this.loop.isRunning && this.fanout.size > 0,
      onRead: (model) => this.fanout.publish(model),
    });
    this.loop = new WatchLoop({
      inspector: options.inspector,
      probe: new TmuxServerProbe(options.tmux),
      read: () => this.model.refresh(),
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

  /** Starts a session (DESIGN.md §8); the answer is read from tmux after the start. */
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
      throw createFailure(err, input.sessionId);
    }
    this.options.log.info("session created", { session: input.sessionId });
    this.changed();
    const session = (await this.model.refresh()).get(input.sessionId);
    if (!session) throw exitedAtOnce(input.sessionId);
    return session;
  }

  /** Stops a session: created ones always, adopted and unmanaged with `force`, system never. */
  async stopSession(tmuxName: string, force: boolean): Promise<void> {
    checkStoppable(await this.getSession(tmuxName), force);
    // The bookkeeping first: nothing is killed unless it can be written (a read-only home refuses).
    const forgotten = await this.marks.forgetAdopted(tmuxName);
    try {
      await killSession(this.options.tmux, tmuxName);
    } catch (err) {
      if (err instanceof TmuxError && err.isNotFound) {
        this.changed();
        throw sessionNotFound(this.options.nodeName, tmuxName);
      }
      if (forgotten) await this.marks.adopt(forgotten).catch(() => undefined);
      throw err;
    }
    this.options.log.info("session stopped", { session: tmuxName, force });
    this.changed();
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
      cli: Cli[session.cli]?.toLowerCase() ?? "",
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
      fresh: async () => {
        await this.model.refresh();
        return this.model.lastObservations.get(tmuxName);
      },
    };
  }

  /** Stops the watch loop and ends every watch stream. */
  async close(): Promise<void> {
    const loop = this.loop.close();
    this.fanout.closeAll();
    await loop;
    this.agents.close();
  }

  /** A change made through the API: later reads must see it, and watchers hear of it now. */
  private changed(): void {
    this.model.changed();
    this.loop.wake();
  }
}
