import { randomBytes } from "node:crypto";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { markRefusal } from "./refusals.js";

/**
 * Request header a Hub sets on every call it makes to a Node: the instance ids of the servers the
 * request has passed through, comma-separated. A server that finds its own id there is being called
 * by itself (a Node registered with a URL that leads back to a Hub) and refuses the request.
 */
export const VIA_HEADER = "staragent-via";

/**
 * Request header a Hub sets on an AnswerPrompt it forwards to a Node: its own caller (token kind and
 * address, `user@203.0.113.5`), for the Node's audit log. Trusted only from a node token.
 */
export const ON_BEHALF_OF_HEADER = "staragent-on-behalf-of";

/** Response header (and error metadata) saying what answered: `hub` or `node`. */
export const SERVER_ROLE_HEADER = "staragent-server";

/** What a StarAgent server is. */
export type ServerRole = "hub" | "node";

/**
 * Most servers a request may pass through. A Hub calls Nodes directly, so a real request passes
 * through one; anything longer is a misconfiguration that must not recurse.
 */
const MAX_HOPS = 4;

/** Bytes of randomness in an instance id: enough that two servers never share one. */
const INSTANCE_ID_BYTES = 9;

/** A new random id for one running server (its identity in `staragent-via`). */
export function newInstanceId(): string {
  return randomBytes(INSTANCE_ID_BYTES).toString("base64url");
}

/** The `staragent-via` value for a call made by server `self` while serving a request with `incoming`. */
export function nextVia(incoming: string | null, self: string): string {
  return incoming ? `${incoming},${self}` : self;
}

/**
 * The refusal of a request that already passed through this server (`instanceId`) or through too
 * many servers (FAILED_PRECONDITION, marked as a loop refusal), else undefined.
 */
export function hopRefusal(header: Headers, instanceId: string, role: ServerRole): ConnectError | undefined {
  const hops = (header.get(VIA_HEADER) ?? "").split(",").filter(Boolean);
  if (hops.includes(instanceId)) {
    return markRefusal(
      new ConnectError(
        `loop: this request already passed through this ${role === "hub" ? "Hub" : "Node"}; a Node's URL leads back to it (check the URLs in ListNodes)`,
        Code.FailedPrecondition,
      ),
      "loop",
    );
  }
  if (hops.length >= MAX_HOPS) {
    return markRefusal(
      new ConnectError(
        `loop: this request passed through ${hops.length} servers; a Node's URL leads to a Hub (give each Node's own address)`,
        Code.FailedPrecondition,
      ),
      "loop",
    );
  }
  return undefined;
}

/**
 * Refuses requests that already passed through this server (FAILED_PRECONDITION, marked as a loop
 * refusal) or through too many servers, before authentication: such a request is never served, and
 * saying so reveals nothing. Sets SERVER_ROLE_HEADER on every answer, errors included.
 */
export function createHopGuard(instanceId: string, role: ServerRole): Interceptor {
  return (next) => async (req) => {
    let res: Awaited<ReturnType<typeof next>>;
    try {
      const loop = hopRefusal(req.header, instanceId, role);
      if (loop) throw loop;
      res = await next(req);
    } catch (err) {
      if (err instanceof ConnectError) err.metadata.set(SERVER_ROLE_HEADER, role);
      throw err;
    }
    res.header.set(SERVER_ROLE_HEADER, role);
    return res;
  };
}
