import { timestampDate } from "@bufbuild/protobuf/wkt";
import {
  Cli,
  type Session,
  SessionOrigin,
  SessionStatus,
  SessionType,
  StatusReason,
} from "../../gen/staragent/v1/session_pb.js";
import { LOCAL_NODE_ID } from "../common/resource-names.js";
import { alignColumns } from "./columns.js";
import { contextCell } from "./usage-format.js";

export { alignColumns };

/** Lower-case name of an enum value without its prefix (`SessionStatus.WORKING` → `working`). */
export function enumWord<E extends Record<number, string>>(e: E, value: number): string {
  return (e[value] ?? "unspecified").toLowerCase().replace(/_/g, "-");
}

/** How the CLI names a session: `NAME` on the Hub's own machine, `NODE/NAME` elsewhere (as it is typed). */
export function sessionLabel(s: Session): string {
  return s.node === LOCAL_NODE_ID ? s.tmuxSession : `${s.node}/${s.tmuxSession}`;
}

/** One line per session, aligned in columns, for `staragent ls`. */
export function sessionTable(sessions: readonly Session[]): string {
  const rows = [
    ["SESSION", "STATUS", "REASON", "CLI", "CONTEXT", "TYPE", "ORIGIN", "ACTIVE", "CWD"],
    ...sessions.map((s) => [
      sessionLabel(s),
      enumWord(SessionStatus, s.status) + (s.nodeUnreachable ? "?" : ""),
      enumWord(StatusReason, s.statusReason),
      enumWord(Cli, s.cli),
      contextCell(s.usage),
      enumWord(SessionType, s.type),
      enumWord(SessionOrigin, s.origin),
      s.lastActivityTime ? ago(timestampDate(s.lastActivityTime)) : "",
      s.cwd,
    ]),
  ];
  return alignColumns(rows);
}

/** A short "how long ago" for a time. */
export function ago(date: Date, now = Date.now()): string {
  const s = Math.max(0, Math.round((now - date.getTime()) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86400)}d ago`;
}
