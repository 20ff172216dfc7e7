import { rootCertificates } from "node:tls";
import type { Transport } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { bearerInterceptor } from "../common/bearer.js";

/**
 * HTTP/2 keepalive towards Nodes: a PING after this long without data on a connection with open
 * streams. With the timeout below, a connection gone silent (a paused Node, a cut network) is closed
 * within seconds, and every stream on it ends instead of hanging.
 */
export const NODE_PING_INTERVAL_MS = 2_000;
/** How long a keepalive PING may go unanswered before the connection counts as dead (as a health check). */
export const NODE_PING_TIMEOUT_MS = 5_000;
/**
 * Compression the Hub accepts from Nodes: none. Lists (about 25 KB per 100 sessions) and terminal
 * output cross a LAN or tailnet, where gzip costs both processes more CPU per call than it saves in
 * time; answers to browsers and scripts are still compressed when they ask.
 */
const NODE_ACCEPT_COMPRESSION: [] = [];

/** A way to call one Node, and its end. */
export interface NodeConnection {
  readonly transport: Transport;
  /** Closes the connection (the node was removed, the Hub stops); calls on it fail. */
  close(): void;
}

/**
 * How the registry reaches a Node from its URL and token: gRPC over HTTP/2 in the Hub
 * (`http2Connector`), an in-memory router in tests of the Hub's routing.
 */
export type NodeConnector = (node: { readonly url: string; readonly token: string }) => NodeConnection;

/**
 * Connections over gRPC on HTTP/2 with the node's token as bearer, keepalive PINGs and no
 * compression. `nodeCa` (PEM, `--node-ca`) is trusted for `https://` Node URLs besides the public roots.
 */
export function http2Connector(nodeCa: string | undefined): NodeConnector {
  return (node) => {
    const secure = node.url.startsWith("https:") && nodeCa !== undefined;
    const connection = new Http2SessionManager(
      node.url,
      { pingIntervalMs: NODE_PING_INTERVAL_MS, pingTimeoutMs: NODE_PING_TIMEOUT_MS },
      // Added to the public roots, never instead of them (NODE_EXTRA_CA_CERTS, when set, is the other way).
      secure ? { ca: [...rootCertificates, nodeCa as string] } : undefined,
    );
    const transport = createGrpcTransport({
      baseUrl: node.url,
      interceptors: [bearerInterceptor(node.token)],
      defaultTimeoutMs: undefined,
      sessionManager: connection,
      acceptCompression: NODE_ACCEPT_COMPRESSION,
    });
    return { transport, close: () => connection.abort() };
  };
}
