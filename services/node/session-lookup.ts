import type { Session } from "../../gen/staragent/v1/session_pb.js";
import type { SessionObservation } from "./status/observation.js";
import type { PaneInfo } from "./tmux/panes.js";

/** What the machine knows of one session beyond its Session: where it runs and what was observed. */
export interface SessionContext {
  /** The session's active pane, from the newest read. */
  readonly pane: PaneInfo;
  /** The newest status observation of the session, if the inspector made one. */
  readonly observation: SessionObservation | undefined;
  /** Reads tmux and the native state now; the session's observation from that read. */
  fresh(): Promise<SessionObservation | undefined>;
  /**
   * When the agent that ran in this session has exited (its pane is a shell now, or dead): its last
   * observation with a native log bound, so its chat stays readable from that log.
   */
  readonly pastAgent?: SessionObservation;
}

/**
 * The narrow view of a machine's sessions that chat works from: the session, its pane and its
 * observation, and a fresh read when it must see the native log as it is now (send confirmation).
 */
export interface SessionLookup {
  /** The node id the sessions are named under. */
  readonly nodeName: string;
  /** One session by tmux name; NOT_FOUND when tmux has no such session. */
  getSession(tmuxName: string): Promise<Session>;
  /** The pane and observation of a session, as of the newest read; undefined when it has no pane. */
  sessionContext(tmuxName: string): SessionContext | undefined;
  /** A session with no pane kept as ended (it went outside StarAgent): its agent's log, for its chat. */
  goneAgent?(tmuxName: string): SessionObservation | undefined;
}
