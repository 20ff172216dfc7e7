import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import {
  connectionKey,
  cookieHeaderKey,
  hostKey,
  originKey,
  type Principal,
  peerAddressKey,
  principalKey,
} from "./context-keys.js";
import type { FailureSlowdown } from "./failure-slowdown.js";
import type { Logger } from "./log.js";
import type { OwnOrigins } from "./own-origins.js";
import { secretLabel, secretsEqual } from "./tokens.js";

/** The gRPC health service answers without credentials (load balancers and probes have none). */
const UNAUTHENTICATED_SERVICES = new Set(["grpc.health.v1.Health"]);

/** What a server accepts as credentials. */
export interface AuthPolicy {
  /** Bearer tokens accepted, each with the principal kind it grants. */
  readonly tokens: ReadonlyArray<{ readonly token: string; readonly kind: Principal["kind"] }>;
  /**
   * Looks up a browser login from the request's cookies and its login key header (Hub only): both
   * are needed, so a cookie the browser handed to a page on another port is worth nothing alone.
   */
  readonly cookieSession?: (cookieHeader: string, loginKey: string) => string | undefined;
  /** Where a caller finds the token this server expects, for the UNAUTHENTICATED message. */
  readonly tokenHint?: string;
}

/** What guards authentication besides the credentials: the failure slowdown and the own origins. */
export interface AuthGuard {
  readonly slowdown: FailureSlowdown;
  /** The server's own origins and names (browser requests must use them). */
  readonly origins: OwnOrigins;
}

/**
 * Header a browser sends with its login's key beside the cookie (the dashboard keeps the key in its
 * origin's storage). Declared here, not in the Hub, because servers' common code reads it.
 */
export const LOGIN_KEY_HEADER = "staragent-login-key";

/** The Hub's hint: its user token. */
const USER_TOKEN_HINT = "the user token: $STARAGENT_AUTH_TOKEN or $STARAGENT_HOME/auth_token on the Hub";

/**
 * Authenticates every call but health: a bearer token from `authorization`, or (Hub) a login cookie
 * on a request that names the server's own origin and host. Sets `principalKey` for the handlers.
 * A request from a web page of another origin is refused (PERMISSION_DENIED) before any credential is
 * looked at. Failures get UNAUTHENTICATED after the wait `slowdown` decides; the right credentials
 * are never delayed or refused because of anyone's failures.
 */
export function createAuthInterceptor(policy: AuthPolicy, guard: AuthGuard, log: Logger): Interceptor {
  return (next) => async (req) => {
    const connection = req.contextValues.get(connectionKey);
    if (UNAUTHENTICATED_SERVICES.has(req.service.typeName)) {
      // Health needs no credentials; a caller that sends valid ones still earns its connection's trust.
      if (req.header.has("authorization") && authenticate(policy, guard.origins, req.header, req.contextValues)) {
        connection.trust();
      }
      return next(req);
    }
    const principal = await checkCredentials(policy, guard, log, {
      header: req.header,
      values: req.contextValues,
      signal: req.signal,
      procedure: `${req.service.typeName}/${req.method.name}`,
    });
    connection.trust();
    req.contextValues.set(principalKey, principal);
    return next(req);
  };
}

/** What checkCredentials needs of a request. */
export interface CredentialRequest {
  readonly header: Headers;
  readonly values: ContextReader;
  readonly signal: AbortSignal;
  /** `service/method`, for the log. */
  readonly procedure: string;
}

interface ContextReader {
  get<T>(key: { id: symbol; defaultValue: T }): T;
}

/**
 * The caller of a request, or the ConnectError that refuses it: PERMISSION_DENIED for a web page of
 * another origin (before any credential is looked at), UNAUTHENTICATED after the slowdown's wait,
 * RESOURCE_EXHAUSTED (and its unauthenticated connection dropped) when the slowdown's queue is full.
 * Used by the interceptor and, before any per-request state is kept, by the gate (auth-gate.ts).
 */
export async function checkCredentials(
  policy: AuthPolicy,
  guard: AuthGuard,
  log: Logger,
  request: CredentialRequest,
): Promise<Principal> {
  const origin = request.values.get(originKey);
  if (origin !== "" && !guard.origins.isOwnOrigin(origin)) {
    throw new ConnectError(
      `requests from web pages of other origins are refused (${truncate(origin)} is not this server's origin; ${guard.origins.hint})`,
      Code.PermissionDenied,
    );
  }
  const principal = authenticate(policy, guard.origins, request.header, request.values);
  if (!principal) {
    const peer = request.values.get(peerAddressKey);
    const { count: failures, overflow } = await guard.slowdown.failed(peer, request.signal);
    if (overflow) {
      // The queue of waiting failures is full: answering at once frees this request's state, and the
      // connection goes (when unauthenticated) so that guessing costs a new connection each time.
      setImmediate(() => request.values.get(connectionKey).drop());
      throw new ConnectError(
        "too many failed authentications are waiting; try again later with the right credentials",
        Code.ResourceExhausted,
      );
    }
    // One line per power of two: a flood of failures cannot flood the log.
    if ((failures & (failures - 1)) === 0) {
      log.warn("authentication failed", {
        peer,
        procedure: request.procedure,
        failures,
      });
    }
    throw new ConnectError(
      `missing or invalid credentials: send 'authorization: Bearer <token>' with ${policy.tokenHint ?? USER_TOKEN_HINT}`,
      Code.Unauthenticated,
    );
  }
  return principal;
}

function authenticate(
  policy: AuthPolicy,
  origins: OwnOrigins,
  header: Headers,
  values: { get<T>(key: { id: symbol; defaultValue: T }): T },
): Principal | undefined {
  const authorization = header.get("authorization");
  if (authorization !== null) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match?.[1]) return undefined;
    const given = match[1];
    for (const { token, kind } of policy.tokens) {
      if (secretsEqual(given, token)) return { kind, id: `${kind}:${secretLabel(token)}` };
    }
    return undefined;
  }
  if (policy.cookieSession) {
    if (!origins.isOwnOrigin(values.get(originKey)) || !origins.isOwnHost(values.get(hostKey))) return undefined;
    const login = policy.cookieSession(values.get(cookieHeaderKey), header.get(LOGIN_KEY_HEADER) ?? "");
    if (login) return { kind: "user", id: `browser:${login}` };
  }
  return undefined;
}

function truncate(value: string): string {
  return value.length > 80 ? `${value.slice(0, 80)}…` : value;
}
