import type { Session } from "../../../gen/staragent/v1/session_pb.js";

/** Exit statuses above this are 128 + a signal's number, as a shell reports them. */
const SIGNAL_BASE = 128;
/** Signals people meet when a CLI ends: named rather than numbered. */
const SIGNAL_NAMES: Readonly<Record<number, string>> = { 1: "SIGHUP", 2: "SIGINT", 9: "SIGKILL", 15: "SIGTERM" };

/** What a session row and page say once the command StarAgent started in it has exited. */
export interface ExitLabel {
  /** Short, for a tag in the row: "exited 0", "exited 3", "ended by SIGINT". */
  readonly text: string;
  /** The whole sentence, for a tooltip and screen readers. */
  readonly title: string;
}

/**
 * The label of a session whose command exited (`Session.exit_status`): its pane then runs a shell,
 * so the row must not read as though the agent were still there. A session that ended altogether
 * (`Session.ended`: the shell exited too) says so, with its last lines, and that Stop dismisses it.
 * Undefined while the command runs.
 */
export function exitLabel(
  session: Pick<Session, "exitStatus"> & Partial<Pick<Session, "ended">>,
): ExitLabel | undefined {
  const ended = session.ended;
  if (ended) {
    const how = ended.exitStatus === undefined ? "" : ` (its last process exited with status ${ended.exitStatus})`;
    const last = ended.lastLines.length > 0 ? ` Its last lines:\n${ended.lastLines.join("\n")}\n` : " ";
    return { text: "ended", title: `This session has ended${how}.${last}Stop dismisses it.` };
  }
  const status = session.exitStatus;
  if (status === undefined) return undefined;
  const signal = status > SIGNAL_BASE ? SIGNAL_NAMES[status - SIGNAL_BASE] : undefined;
  const text = signal ? `ended by ${signal}` : `exited ${status}`;
  const how = signal ? `was ended by ${signal} (status ${status})` : `exited with status ${status}`;
  return { text, title: `The command started in this session ${how}; its pane is now a shell in the same folder.` };
}
