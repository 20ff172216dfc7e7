import { randomBytes } from "node:crypto";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { markRefusal } from "./refusals.js";

/**
 * Request header a Hub sets on every call it makes to a Node: the instance ids of the servers the
 * request has passed through, comma-separated. A server that finds its own id there is being called
 * by itself (a Node registered with a URL that leads back to a Hub) and refuses the request.
 */
export const VIA_HEADER = "staragent-via";

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
 * Refuses requests that already passed through this server (FAILED_PRECONDITION, marked as a loop
 * refusal) or through too many servers, before authentication: such a request is never served, and
 * saying so reveals nothing. Sets SERVER_ROLE_HEADER on every answer, errors included.
 */
export function createHopGuard(instanceId: string, role: ServerRole): Interceptor {
  return (next) => async (req) => {
    const hops = (req.header.get(VIA_HEADER) ?? "").split(",").filter(Boolean);
    let res: Awaited<ReturnType<typeof next>>;
    try {
      if (hops.includes(instanceId)) {
        throw markRefusal(
          new ConnectError(
            `loop: this request already passed through this ${role === "hub" ? "Hub" : "Node"}; a Node's URL leads back to it (check the URLs in ListNodes)`,
            Code.FailedPrecondition,
          ),
          "loop",
        );
      }
      if (hops.length >= MAX_HOPS) {
        throw markRefusal(
          new ConnectError(
            `loop: this request passed through ${hops.length} servers; a Node's URL leads to a Hub (give each Node's own address)`,
            Code.FailedPrecondition,
          ),
          "loop",
        );
      }
      res = await next(req);
    } catch (err) {
      if (err instanceof ConnectError) err.metadata.set(SERVER_ROLE_HEADER, role);
      throw err;
    }
    res.header.set(SERVER_ROLE_HEADER, role);
    return res;
  };
}
