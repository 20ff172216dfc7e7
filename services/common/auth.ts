import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { cookieHeaderKey, hostKey, originKey, type Principal, peerAddressKey, principalKey } from "./context-keys.js";
import type { Logger } from "./log.js";
import { secretLabel, secretsEqual } from "./tokens.js";

/** Failed authentications a peer address may make per window before it is refused outright. */
const MAX_FAILURES_PER_WINDOW = 20;
/** The rate-limit window: long enough to stop guessing, short enough not to lock out a typo. */
const FAILURE_WINDOW_MS = 60_000;
/** Peers tracked at once; the oldest are forgotten first, so the table cannot grow without bound. */
const MAX_TRACKED_PEERS = 10_000;

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

/** The Hub's hint: its user token. */
const USER_TOKEN_HINT = "the user token: $STARAGENT_AUTH_TOKEN or $STARAGENT_HOME/auth_token on the Hub";

/**
 * Counts failed attempts per peer address so that guessing a token is slow. Kept separate from the
 * interceptor so the login page shares the same limit.
 */
export class FailureLimiter {
  private readonly failures = new Map<string, { count: number; windowStart: number }>();

  constructor(
    private readonly maxFailures = MAX_FAILURES_PER_WINDOW,
    private readonly windowMs = FAILURE_WINDOW_MS,
  ) {}

  /** Milliseconds until `peer` may try again, or 0 when it may try now. */
  retryAfterMs(peer: string, now = Date.now()): number {
    const entry = this.failures.get(peer);
    if (!entry || now - entry.windowStart >= this.windowMs) return 0;
    return entry.count >= this.maxFailures ? this.windowMs - (now - entry.windowStart) : 0;
  }

  /** Records one failed attempt by `peer`. */
  recordFailure(peer: string, now = Date.now()): void {
    const entry = this.failures.get(peer);
    if (!entry || now - entry.windowStart >= this.windowMs) {
      this.failures.delete(peer);
      if (this.failures.size >= MAX_TRACKED_PEERS) {
        const oldest = this.failures.keys().next().value;
        if (oldest !== undefined) this.failures.delete(oldest);
      }
      this.failures.set(peer, { count: 1, windowStart: now });
    } else {
      entry.count++;
    }
  }
}

/**
 * Authenticates every call but health: a bearer token from `authorization`, or (Hub) a login cookie
 * whose request comes from the server's own origin. Sets `principalKey` for the handlers. Failures get
 * UNAUTHENTICATED; a peer over the failure limit gets RESOURCE_EXHAUSTED until its window passes.
 */
export function createAuthInterceptor(policy: AuthPolicy, limiter: FailureLimiter, log: Logger): Interceptor {
  return (next) => async (req) => {
    if (UNAUTHENTICATED_SERVICES.has(req.service.typeName)) return next(req);
    const peer = req.contextValues.get(peerAddressKey);
    const wait = limiter.retryAfterMs(peer);
    if (wait > 0) {
      throw new ConnectError(
        `too many failed authentication attempts from this address; retry in ${Math.ceil(wait / 1000)} s`,
        Code.ResourceExhausted,
      );
    }
    const principal = authenticate(policy, req.header, req.contextValues);
    if (!principal) {
      limiter.recordFailure(peer);
      log.warn("authentication failed", { peer, procedure: `${req.service.typeName}/${req.method.name}` });
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
    if (session && sameOrigin(values.get(originKey), values.get(hostKey))) {
      return { kind: "user", id: `browser:${secretLabel(session)}` };
    }
  }
  return undefined;
}

/**
 * Cookie-authenticated calls must come from the server's own origin: a page elsewhere cannot ride on
 * the cookie (SameSite=Strict already stops most of that; this closes the rest).
 */
function sameOrigin(origin: string, host: string): boolean {
  if (origin === "" || host === "") return false;
  try {
    return new URL(origin).host === host;
  } catch {
    return false;
  }
}
