import { ConnectError, type Interceptor } from "@connectrpc/connect";

/**
 * Error metadata marking an error that refuses the caller itself rather than answering its request:
 * `credentials` (missing or wrong token, too many failures from its address) or `loop` (the request
 * came back to a server it passed through). A Hub reads it to tell "Node X does not accept the Hub"
 * (a Hub-side problem to show as such) from "Node X says this session does not exist" (the
 * caller's answer, relayed unchanged): both may share a code, RESOURCE_EXHAUSTED for instance.
 */
export const REFUSAL_HEADER = "staragent-refusal";

/** Why a server refused a caller outright. */
export type Refusal = "credentials" | "loop";

/** Marks `error` as a refusal of the caller; returns it. */
export function markRefusal(error: ConnectError, why: Refusal): ConnectError {
  error.metadata.set(REFUSAL_HEADER, why);
  return error;
}

/** The refusal an error from a StarAgent server carries, if any. */
export function refusalOf(error: unknown): Refusal | undefined {
  if (!(error instanceof ConnectError)) return undefined;
  const value = error.metadata.get(REFUSAL_HEADER);
  return value === "credentials" || value === "loop" ? value : undefined;
}

/**
 * Wraps the authentication interceptor so that every error it raises before admitting a call is
 * marked as a `credentials` refusal (errors of the admitted call's handler are not).
 */
export function markCredentialRefusals(auth: Interceptor): Interceptor {
  return (next) => async (req) => {
    let admitted = false;
    const admit: typeof next = (r) => {
      admitted = true;
      return next(r);
    };
    try {
      return await auth(admit)(req);
    } catch (err) {
      if (!admitted && err instanceof ConnectError) throw markRefusal(err, "credentials");
      throw err;
    }
  };
}
