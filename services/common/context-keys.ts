import { createContextKey } from "@connectrpc/connect";

/** Who is calling, set by the auth interceptor; handlers use it to scope per-caller resources. */
export interface Principal {
  /** `user` for the Hub's user token or cookie, `node` for the node token, `anonymous` for health. */
  readonly kind: "user" | "node" | "anonymous";
  /**
   * A stable identity for limits and ownership: the login session for cookies, a hash prefix of the
   * token otherwise. Never the token itself.
   */
  readonly id: string;
}

/** The authenticated caller of the current RPC. */
export const principalKey = createContextKey<Principal>({ kind: "anonymous", id: "anonymous" });

/** The remote address of the connection carrying the current RPC (for rate limits and logs). */
export const peerAddressKey = createContextKey<string>("unknown");

/** The cookie header of the current request; the Hub's browser sessions authenticate with it. */
export const cookieHeaderKey = createContextKey<string>("");

/** The `Origin` of the current request, checked for cookie-authenticated calls. */
export const originKey = createContextKey<string>("");

/** The `Host` of the current request, compared with `Origin` for cookie-authenticated calls. */
export const hostKey = createContextKey<string>("");

/**
 * The connection carrying the current request: the auth interceptor moves it out of the
 * unauthenticated budget once it authenticates, and closes it when its failures cannot be held back.
 */
export const connectionKey = createContextKey<{ trust(): void; drop(): void }>({
  trust: () => undefined,
  drop: () => undefined,
});
