import { Code, ConnectError } from "@connectrpc/connect";
import { type Cli, type Session, SessionStatus, SessionType } from "../../gen/staragent/v1/session_pb.js";

/** Longest filter string accepted. */
const MAX_FILTER_LENGTH = 512;

const STATUS_VALUES: Record<string, SessionStatus> = {
  working: SessionStatus.WORKING,
  review: SessionStatus.REVIEW,
  idle: SessionStatus.IDLE,
};
const TYPE_VALUES: Record<string, SessionType> = { agent: SessionType.AGENT, system: SessionType.SYSTEM };

/** A parsed ListSessions filter: every term must match. */
export type SessionFilter = (session: Session) => boolean;

/**
 * Parses `status=working type=agent cli=claude` (space-separated, all must match; a key may repeat
 * with `,` between values: `status=working,review`). INVALID_ARGUMENT names the bad term. `cliNames`
 * are the `cli=` values and what they stand for: the machine's agent registry's `filterNames`.
 */
export function parseSessionFilter(filter: string, cliNames: ReadonlyMap<string, Cli>): SessionFilter {
  if (filter.length > MAX_FILTER_LENGTH) {
    throw new ConnectError(`filter: longer than ${MAX_FILTER_LENGTH} characters`, Code.InvalidArgument);
  }
  const cliValues: Record<string, Cli> = Object.fromEntries(cliNames);
  const tests: SessionFilter[] = [];
  for (const term of filter.trim().split(/\s+/).filter(Boolean)) {
    const [key, value] = term.split("=", 2);
    const values = (value ?? "").split(",");
    const table =
      key === "status" ? STATUS_VALUES : key === "type" ? TYPE_VALUES : key === "cli" ? cliValues : undefined;
    if (!table || values.some((v) => !(v in table))) {
      throw new ConnectError(
        `filter: ${JSON.stringify(term)} is not understood; use status=working|review|idle, type=agent|system, cli=${[...cliNames.keys()].join("|")}`,
        Code.InvalidArgument,
      );
    }
    const wanted = new Set(values.map((v) => table[v]));
    const field = key as "status" | "type" | "cli";
    tests.push((s) => wanted.has(s[field]));
  }
  return (s) => tests.every((t) => t(s));
}
