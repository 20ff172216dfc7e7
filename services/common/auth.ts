import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { cookieHeaderKey, hostKey, originKey, type Principal, peerAddressKey, principalKey } from "./context-keys.js";
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
  /** Looks up a browser login session from the request's cookies (Hub only). */
  readonly cookieSession?: (cookieHeader: string) => string | undefined;
  /** Where a caller finds the token this server expects, for the UNAUTHENTICATED message. */
  readonly tokenHint?: string;
}

/** What guards authentication besides the credentials: the failure slowdown and the own origins. */
export interface AuthGuard {
  readonly slowdown: FailureSlowdown;
  /** The server's own origins and names (browser requests must use them). */
  readonly origins: OwnOrigins;
}

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
    if (UNAUTHENTICATED_SERVICES.has(req.service.typeName)) return next(req);
    const origin = req.contextValues.get(originKey);
    if (origin !== "" && !guard.origins.isOwnOrigin(origin)) {
      throw new ConnectError(
        `requests from web pages of other origins are refused (${truncate(origin)} is not this server's origin; ${guard.origins.hint})`,
        Code.PermissionDenied,
      );
    }
    const principal = authenticate(policy, guard.origins, req.header, req.contextValues);
    if (!principal) {
      const peer = req.contextValues.get(peerAddressKey);
      const failures = await guard.slowdown.failed(peer, req.signal);
      // One line per power of two: a flood of failures cannot flood the log.
      if ((failures & (failures - 1)) === 0) {
        log.warn("authentication failed", {
          peer,
          procedure: `${req.service.typeName}/${req.method.name}`,
          failures,
        });
      }
      throw new ConnectError(
        `missing or invalid credentials: send 'authorization: Bearer <token>' with ${policy.tokenHint ?? USER_TOKEN_HINT}`,
        Code.Unauthenticated,
      );
    }
    req.contextValues.set(principalKey, principal);
    return next(req);
  };
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
    const session = policy.cookieSession(values.get(cookieHeaderKey));
    if (session && origins.isOwnOrigin(values.get(originKey)) && origins.isOwnHost(values.get(hostKey))) {
      return { kind: "user", id: `browser:${secretLabel(session)}` };
    }
  }
  return undefined;
}

function truncate(value: string): string {
  return value.length > 80 ? `${value.slice(0, 80)}…` : value;
}
