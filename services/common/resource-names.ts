import { Code, ConnectError } from "@connectrpc/connect";

/** tmux session names StarAgent creates: letters, digits, `_` and `-`, 1 to 64 characters. */
export const SESSION_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Names of StarAgent's own infrastructure sessions: shown as type SYSTEM, never stopped by the API. */
export const SYSTEM_SESSION_NAMES: ReadonlySet<string> = new Set([
  "staragent-hub",
  "staragent-node",
  "staragent-tailscaled",
]);

/** Node ids: lowercase letters, digits and `-`, starting with a letter, 1 to 63 characters. */
export const NODE_ID_PATTERN = /^[a-z][a-z0-9-]{0,62}$/;

/** The node id a Hub gives its own machine. */
export const LOCAL_NODE_ID = "local";

/** Throws INVALID_ARGUMENT naming `field` unless `value` is a valid session name. */
export function validateSessionName(value: string, field: string): void {
  if (!SESSION_NAME_PATTERN.test(value)) {
    throw new ConnectError(
      `${field}: ${JSON.stringify(truncate(value))} is not a valid session name (use letters, digits, '_' and '-', 1 to 64 characters)`,
      Code.InvalidArgument,
    );
  }
}

/**
 * Why no call can name the tmux session `session` (undefined when one can): the sentence a Session's
 * `unmanageable_reason` and the refusal of such a name both give.
 */
export function sessionNameProblem(session: string): string | undefined {
  if (SESSION_NAME_PATTERN.test(session)) return undefined;
  return "StarAgent reaches only sessions named with letters, digits, '_' and '-' (1 to 64 characters); a tmux session named otherwise is listed but not managed: rename it in tmux (tmux rename-session) to manage it";
}

/** The parts of a session resource name `nodes/{node}/sessions/{session}`. */
export interface SessionName {
  readonly node: string;
  readonly session: string;
}

/**
 * Parses `nodes/{node}/sessions/{session}`; INVALID_ARGUMENT naming `field` when malformed. A tmux
 * session named otherwise than SESSION_NAME_PATTERN (made by hand) is listed but cannot be addressed:
 * the error says so, and how to make it addressable.
 */
export function parseSessionName(value: string, field = "name"): SessionName {
  const match = /^nodes\/([^/]+)\/sessions\/(.+)$/s.exec(value);
  if (!match?.[1] || !match[2]) {
    throw new ConnectError(
      `${field}: ${JSON.stringify(truncate(value))} is not a session name of the form nodes/{node}/sessions/{session}`,
      Code.InvalidArgument,
    );
  }
  const problem = sessionNameProblem(match[2]);
  if (problem !== undefined) {
    throw new ConnectError(
      `${field}: ${JSON.stringify(truncate(value))} cannot be addressed: ${problem}`,
      Code.InvalidArgument,
    );
  }
  if (match[1] !== "-" && !NODE_ID_PATTERN.test(match[1])) {
    throw new ConnectError(
      `${field}: ${JSON.stringify(truncate(match[1]))} is not a valid node id`,
      Code.InvalidArgument,
    );
  }
  return { node: match[1], session: match[2] };
}

/**
 * Parses a parent `nodes/{node}` or `nodes/-`; empty means every node (`-`). INVALID_ARGUMENT when
 * malformed.
 */
export function parseParent(value: string, field = "parent"): string {
  if (value === "") return "-";
  const match = /^nodes\/([^/]+)$/.exec(value);
  if (!match?.[1] || (match[1] !== "-" && !NODE_ID_PATTERN.test(match[1]))) {
    throw new ConnectError(
      `${field}: ${JSON.stringify(truncate(value))} is not a parent of the form nodes/{node} or nodes/-`,
      Code.InvalidArgument,
    );
  }
  return match[1];
}

/** Formats `nodes/{node}/sessions/{session}`. */
export function sessionResourceName(node: string, session: string): string {
  return `nodes/${node}/sessions/${session}`;
}

function truncate(value: string): string {
  return value.length > 80 ? `${value.slice(0, 80)}…` : value;
}
