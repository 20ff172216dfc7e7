import { setMaxListeners } from "node:events";
import type { DescService, FileRegistry } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter, createContextValues, type Interceptor } from "@connectrpc/connect";
import { type ConnectNodeAdapterOptions, connectNodeAdapter } from "@connectrpc/connect-node";
import { Health } from "../../gen/grpc/health/v1/health_pb.js";
import { type AuthPolicy, createAuthInterceptor } from "./auth.js";
import { createAuthGate } from "./auth-gate.js";
import { checkBinaryRequests } from "./binary-requests.js";
import { connectionKey, cookieHeaderKey, hostKey, originKey, peerAddressKey } from "./context-keys.js";
import { createErrorInterceptor } from "./errors.js";
import { FailureSlowdown } from "./failure-slowdown.js";
import { registerHealth } from "./health.js";
import { createHopGuard, newInstanceId, type ServerRole } from "./hops.js";
import { type ListenerLimits, type ListenerTls, listenOnePort, type OnePortServer } from "./listener.js";
import type { Logger } from "./log.js";
import { OwnOrigins } from "./own-origins.js";
import { registerReflection } from "./reflection.js";
import { markCredentialRefusals } from "./refusals.js";

/** Largest request message accepted: bounds memory per call; inputs have tighter limits of their own. */
const READ_MAX_BYTES = 4 * 1024 * 1024;

/** A handler for requests that are not RPCs (static files, the login page). */
export type FallbackHandler = NonNullable<ConnectNodeAdapterOptions["fallback"]>;

/** Everything a StarAgent server (Hub or Node) is made of. */
export interface ServerOptions {
  /** What this server is (answers say so in `staragent-server`). */
  readonly role: ServerRole;
  /** This server's identity in `staragent-via` (loop detection); a new random one when absent. */
  readonly instanceId?: string;
  readonly host: string;
  readonly port: number;
  /** Registers the server's own services. */
  readonly routes: (router: ConnectRouter) => void;
  /** The services `routes` registers, for reflection and health. */
  readonly services: DescService[];
  /** Descriptors of every file the services use, for reflection. */
  readonly registry: FileRegistry;
  readonly auth: AuthPolicy;
  readonly log: Logger;
  /** Serves non-RPC paths; 404 when absent. */
  readonly fallback?: FallbackHandler;
  /** Slows failed authentication down; pass the login page's to share one budget per peer. */
  readonly slowdown?: FailureSlowdown;
  /**
   * The server's own origins, completed with its address once it listens; pass the login page's so
   * both judge browsers alike. A new one (loopback names and the address) otherwise.
   */
  readonly origins?: OwnOrigins;
  /** Extra interceptors run after authentication. */
  readonly interceptors?: Interceptor[];
  /** Overrides of the connection limits (tests use short ones); DEFAULT_LISTENER_LIMITS otherwise. */
  readonly listenerLimits?: Partial<ListenerLimits>;
  /** Serve HTTPS (HTTP/2 and HTTP/1.1 by ALPN) with this certificate; cleartext when absent. */
  readonly tls?: ListenerTls;
}

/** A running server. */
export interface RunningServer {
  readonly url: string;
  /** This server's identity in `staragent-via`. */
  readonly instanceId: string;
  readonly port: number;
  /** Aborted when the server begins to stop; streaming handlers end on it. */
  readonly shutdownSignal: AbortSignal;
  /** Ends streams, closes connections and resolves once the port is free. */
  close(): Promise<void>;
}

/**
 * Starts a server on one port serving Connect, gRPC and gRPC-Web over HTTP/1.1 and HTTP/2 cleartext,
 * with authentication on every call but health, gRPC reflection and health, and error logging.
 * Requests that come back to it through a loop of Nodes are refused before authentication
 * (`hops.ts`); errors that refuse the caller's credentials are marked as such (`refusals.ts`).
 */
export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const shutdown = new AbortController();
  // Connect links every call's signal to this one (an abort listener per call in flight, removed when
  // the call ends), so its listener count is the number of calls in flight, bounded by the connection
  // and stream caps; Node's default of 10 would warn of a leak at the 11th concurrent call.
  setMaxListeners(0, shutdown.signal);
  const instanceId = options.instanceId ?? newInstanceId();
  const slowdown = options.slowdown ?? new FailureSlowdown();
  const origins = options.origins ?? new OwnOrigins();
  // Set once listening; requests arrive only then.
  let listener: OnePortServer | undefined;
  /** Every RPC but health: the gate checks their credentials before Connect reads a byte of the body. */
  const guardedPaths = new Set<string>();
  const handler = connectNodeAdapter({
    routes: (router) => {
      options.routes(router);
      registerReflection(router, options.registry, [...options.services, Health]);
      registerHealth(
        router,
        options.services.map((s) => s.typeName),
      );
      checkBinaryRequests(router.handlers, READ_MAX_BYTES);
      for (const h of router.handlers) {
        if (h.service.typeName !== Health.typeName) guardedPaths.add(h.requestPath);
      }
    },
    interceptors: [
      createErrorInterceptor(options.log),
      createHopGuard(instanceId, options.role),
      markCredentialRefusals(createAuthInterceptor(options.auth, { slowdown, origins }, options.log)),
      ...(options.interceptors ?? []),
    ],
    shutdownSignal: shutdown.signal,
    readMaxBytes: READ_MAX_BYTES,
    contextValues: (req) => {
      const values = createContextValues();
      values.set(peerAddressKey, req.socket?.remoteAddress ?? "unknown");
      values.set(cookieHeaderKey, headerValue(req.headers.cookie));
      values.set(originKey, headerValue(req.headers.origin));
      values.set(hostKey, headerValue(req.headers.host ?? req.headers[":authority"]));
      const connection = listener?.connectionOf(req);
      if (connection) values.set(connectionKey, connection);
      return values;
    },
    fallback:
      options.fallback ??
      ((_req, res) => {
        res.writeHead(404, { "content-type": "text/plain; charset=utf-8" });
        res.end("not found\n");
      }),
  });
  const gated = createAuthGate(handler, {
    policy: options.auth,
    guard: { slowdown, origins },
    log: options.log,
    role: options.role,
    instanceId,
    guardedPaths,
    connectionOf: (req) => listener?.connectionOf(req),
  });
  listener = await listenOnePort(gated, options.host, options.port, {
    limits: options.listenerLimits,
    log: options.log,
    tls: options.tls,
  });
  const bound = listener;
  origins.bind(bound.host, bound.port, options.tls ? "https" : "http");
  options.log.info("listening", { url: bound.url });
  return {
    url: bound.url,
    instanceId,
    port: bound.port,
    shutdownSignal: shutdown.signal,
    close: async () => {
      if (!shutdown.signal.aborted) shutdown.abort(new ConnectError("server stopping", Code.Unavailable));
      await bound.close();
    },
  };
}

function headerValue(value: string | string[] | undefined): string {
  return Array.isArray(value) ? value.join("; ") : (value ?? "");
}
