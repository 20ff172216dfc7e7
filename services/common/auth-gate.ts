import type http from "node:http";
import type http2 from "node:http2";
import { Code, ConnectError, createContextValues } from "@connectrpc/connect";
import { type AuthGuard, type AuthPolicy, checkCredentials } from "./auth.js";
import { connectionKey, cookieHeaderKey, hostKey, originKey, peerAddressKey } from "./context-keys.js";
import { hopRefusal, SERVER_ROLE_HEADER, type ServerRole } from "./hops.js";
import type { DualHandler, RequestConnection } from "./listener.js";
import type { Logger } from "./log.js";
import { REFUSAL_HEADER, refusalOf } from "./refusals.js";

/** What the gate guards and with what. */
export interface AuthGateOptions {
  readonly policy: AuthPolicy;
  readonly guard: AuthGuard;
  readonly log: Logger;
  readonly role: ServerRole;
  readonly instanceId: string;
  /** Paths of the RPCs that need credentials (`/package.Service/Method`); others pass untouched. */
  readonly guardedPaths: ReadonlySet<string>;
  readonly connectionOf: (req: http.IncomingMessage | http2.Http2ServerRequest) => RequestConnection | undefined;
}

/** Connect's error codes by name, for the JSON error body, and the HTTP status a Connect client maps back. */
const CONNECT_ERRORS: Partial<Record<Code, { readonly name: string; readonly status: number }>> = {
  [Code.Unauthenticated]: { name: "unauthenticated", status: 401 },
  [Code.PermissionDenied]: { name: "permission_denied", status: 403 },
  [Code.ResourceExhausted]: { name: "resource_exhausted", status: 429 },
  [Code.FailedPrecondition]: { name: "failed_precondition", status: 400 },
};

/**
 * Checks an RPC's loop headers and credentials from its headers alone, before the RPC framework reads
 * its body or keeps any state for it: a request without valid credentials is answered here (after the
 * failure slowdown's wait, whose queue is small and bounded) and never reaches Connect. Without it, a
 * stream that sends its headers and never its body waited forever with its state held, before any
 * check ran. The interceptors check again (the same functions) for what passes.
 */
export function createAuthGate(handler: DualHandler, options: AuthGateOptions): DualHandler {
  return (req, res) => {
    const path = (req.url ?? "").split("?", 1)[0] ?? "";
    if (!options.guardedPaths.has(path)) return handler(req, res);
    const header = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (name.startsWith(":") || value === undefined) continue;
      header.set(name, Array.isArray(value) ? value.join(", ") : value);
    }
    const loop = hopRefusal(header, options.instanceId, options.role);
    if (loop) return refuse(req, res, loop, options.role);
    const values = createContextValues();
    values.set(peerAddressKey, req.socket?.remoteAddress ?? "unknown");
    values.set(cookieHeaderKey, header.get("cookie") ?? "");
    values.set(originKey, header.get("origin") ?? "");
    values.set(hostKey, headerText(req.headers.host ?? req.headers[":authority"]));
    const connection = options.connectionOf(req);
    if (connection) values.set(connectionKey, connection);
    const gone = new AbortController();
    res.once("close", () => gone.abort());
    checkCredentials(options.policy, options.guard, options.log, {
      header,
      values,
      signal: gone.signal,
      procedure: path.slice(1),
    }).then(
      () => handler(req, res),
      (err: unknown) => {
        if (gone.signal.aborted) return;
        refuse(
          req,
          res,
          err instanceof ConnectError ? err : new ConnectError(String(err), Code.Internal),
          options.role,
        );
      },
    );
  };
}

/** Answers `error` in the request's protocol: gRPC and gRPC-Web as trailers-only, Connect as JSON. */
function refuse(
  req: http.IncomingMessage | http2.Http2ServerRequest,
  res: http.ServerResponse | http2.Http2ServerResponse,
  error: ConnectError,
  role: ServerRole,
): void {
  const marks: Record<string, string> = { [SERVER_ROLE_HEADER]: role };
  const refusal = refusalOf(error) ?? "credentials";
  marks[REFUSAL_HEADER] = refusal;
  const contentType = headerText(req.headers["content-type"]);
  // The body is never read: the connection is not kept for a next request over HTTP/1.1.
  if (!("stream" in req)) marks.connection = "close";
  if (
    contentType.startsWith("application/grpc") &&
    "stream" in res &&
    !contentType.startsWith("application/grpc-web")
  ) {
    // gRPC over HTTP/2: a trailers-only answer is one HEADERS frame that ends the stream (grpc-js
    // reads a status in headers followed by an empty DATA frame as a call that ended without one).
    const stream = (res as http2.Http2ServerResponse).stream;
    if (!stream.headersSent && !stream.destroyed) {
      stream.respond(
        {
          ":status": 200,
          ...marks,
          "content-type": contentType,
          "grpc-status": String(error.code),
          "grpc-message": encodeURIComponent(error.rawMessage),
        },
        { endStream: true },
      );
    }
    return;
  }
  if (contentType.startsWith("application/grpc")) {
    (res as http.ServerResponse).writeHead(200, {
      ...marks,
      "content-type": contentType,
      "grpc-status": String(error.code),
      "grpc-message": encodeURIComponent(error.rawMessage),
    });
    res.end();
    return;
  }
  const known = CONNECT_ERRORS[error.code] ?? { name: "internal", status: 500 };
  (res as http.ServerResponse).writeHead(known.status, { ...marks, "content-type": "application/json" });
  res.end(JSON.stringify({ code: known.name, message: error.rawMessage }));
}

function headerText(value: string | string[] | undefined): string {
  return Array.isArray(value) ? value.join("; ") : (value ?? "");
}
