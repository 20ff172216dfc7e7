import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { setTimeout as delay } from "node:timers/promises";
import tls from "node:tls";

import { type BudgetedConnection, ConnectionBudget } from "./connection-budget.js";
import type { Logger } from "./log.js";

/** The HTTP/2 client preface every h2c connection starts with. */
const H2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
/** How long a graceful close waits for HTTP/2 sessions and requests in flight before destroying them. */
const CLOSE_GRACE_MS = 2_000;
/** How often close() looks whether the HTTP/1.1 sockets have drained: short, as a stop waits on it. */
const SOCKET_DRAIN_POLL_MS = 20;

/**
 * What bounds the connections of one listener, so that sockets which send a few bytes and stall (or
 * nothing at all) cannot pile up until the process runs out of file descriptors.
 */
export interface ListenerLimits {
  /** Longest a new connection may take to send the bytes that say its protocol, from its start. */
  readonly firstBytesTimeoutMs: number;
  /** HTTP/1.1: longest a request's headers may take to arrive, from their first byte. */
  readonly headersTimeoutMs: number;
  /** HTTP/1.1: longest a whole request (headers and body) may take to arrive. */
  readonly requestTimeoutMs: number;
  /** How often HTTP/1.1 connections are checked against the two limits above. */
  readonly checkIntervalMs: number;
  /**
   * Longest a connection (HTTP/1.1 socket or HTTP/2 session) may go without a byte either way. Long
   * streams send heartbeats (every 15 s), so only dead or stalled connections reach it.
   */
  readonly idleTimeoutMs: number;
  /** Most connections open at once from one peer address; more are closed at once. */
  readonly maxConnectionsPerPeer: number;
  /** Most connections open at once in all (far below the process's file descriptor limit). */
  readonly maxConnections: number;
  /**
   * Most connections from one peer address that have not authenticated (no request with valid
   * credentials yet): they have a budget of their own and are dropped first when room is needed.
   */
  readonly maxUnauthenticatedPerPeer: number;
  /** Most unauthenticated connections in all. */
  readonly maxUnauthenticated: number;
  /** An unauthenticated connection with nothing in flight is closed this long after it opened. */
  readonly unauthenticatedIdleMs: number;
  /** HTTP/2 streams open at once on an unauthenticated connection (SETTINGS_MAX_CONCURRENT_STREAMS). */
  readonly unauthenticatedStreams: number;
  /** HTTP/2 streams open at once on an authenticated connection. */
  readonly maxStreams: number;
}

/** The limits servers run with. */
export const DEFAULT_LISTENER_LIMITS: ListenerLimits = {
  // A client that connects has its first request ready; 10 s covers a slow link.
  firstBytesTimeoutMs: 10_000,
  headersTimeoutMs: 15_000,
  // Request bodies are small (4 MiB at most) and sent at once; responses may stream for hours.
  requestTimeoutMs: 30_000,
  checkIntervalMs: 2_000,
  // Eight missed heartbeats of a stream (15 s each): long enough never to cut a live one.
  idleTimeoutMs: 120_000,
  // A machine's browser tabs, CLIs, scripts and a Hub share one address (loopback): room for all of
  // them with their streams, far from the 1 024 to 20 000 descriptors a process typically gets.
  maxConnectionsPerPeer: 256,
  maxConnections: 4_096,
  // A CLI or script authenticates with its first request; browsers fetch the dashboard's files on a
  // few connections before their first call. Far fewer than the caps above, so holding them all
  // cannot use up the room of authenticated connections.
  maxUnauthenticatedPerPeer: 32,
  maxUnauthenticated: 512,
  // The first request comes right after connecting; a browser's idle keep-alive reconnects at once.
  unauthenticatedIdleMs: 10_000,
  // A client opens its first streams before it has the server's SETTINGS, so this must not be below
  // what a client sends at once on a new connection (RFC 9113 recommends at least 100). Credentials
  // are checked before any per-call state is kept (auth-gate.ts), so these streams cost little; a
  // client that opens more loses its connection.
  unauthenticatedStreams: 100,
  // A Hub relays every viewer of a Node's sessions over one connection: room for many.
  maxStreams: 1_000,
};

/** What a request handler can do to the connection a request came on. */
export interface RequestConnection {
  /** It authenticated: it leaves the unauthenticated budget and may open `maxStreams` streams. */
  trust(): void;
  /** Closes it (a peer whose failures are past the slowdown's queue). */
  drop(): void;
}

/**
 * What a listener speaks TLS with, when asked (`--tls-cert`, `--tls-key`): the certificate chain and
 * its private key, in PEM. Without it the listener speaks cleartext (loopback, or behind a TLS proxy).
 */
export interface ListenerTls {
  readonly cert: string | Buffer;
  readonly key: string | Buffer;
}

/**
 * Protocols offered in the TLS handshake (ALPN), most preferred first: browsers and gRPC clients pick
 * HTTP/2; clients that speak only HTTP/1.1 (curl --http1.1, old tools) get it.
 */
const ALPN_PROTOCOLS = ["h2", "http/1.1"];
/** Oldest TLS version accepted: TLS 1.0 and 1.1 are broken and no current browser or tool needs them. */
const TLS_MIN_VERSION = "TLSv1.2";

/** The first byte of every TLS connection (a handshake record); anything else is cleartext. */
const TLS_HANDSHAKE_RECORD = 0x16;

/**
 * Answers a cleartext connection to a TLS port: an HTTP/1.1 request (a browser or curl given http://)
 * gets a 400 saying to use https://, so the person sees why; anything else (an h2c client) is closed.
 */
function refuseCleartext(socket: net.Socket, first: Buffer): void {
  if (first.subarray(0, 3).toString("latin1") === "PRI" || !/^[A-Z]/.test(first.toString("latin1", 0, 1))) {
    socket.destroy();
    return;
  }
  const body = "This port speaks HTTPS only: use https:// instead of http://.\n";
  socket.resume();
  socket.end(
    "HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n" +
      `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/** One accepted TCP connection, for the budget (see ConnectionBudget). */
interface Connection extends BudgetedConnection {
  trusted: boolean;
  /** HTTP/2 streams open on it. */
  streams: number;
  readonly socket: net.Socket;
  session?: http2.ServerHttp2Session;
  untrustedTimer?: NodeJS.Timeout;
}

/** A request handler that serves both HTTP/1.1 and HTTP/2 requests (what `connectNodeAdapter` returns). */
export type DualHandler = (
  req: http.IncomingMessage | http2.Http2ServerRequest,
  res: http.ServerResponse | http2.Http2ServerResponse,
) => void;

/** A server listening on one port for every protocol. */
export interface OnePortServer {
  /** The bound address, e.g. `127.0.0.1`. */
  readonly host: string;
  /** The bound port (useful when listening on port 0). */
  readonly port: number;
  /** `http://host:port` (`https://` with TLS), with IPv6 hosts in brackets. */
  readonly url: string;
  /** The connection `req` came on, for the authentication interceptor (undefined once it closed). */
  connectionOf(req: http.IncomingMessage | http2.Http2ServerRequest): RequestConnection | undefined;
  /** Unauthenticated connections dropped to make room so far. */
  readonly evicted: () => number;
  /**
   * Stops accepting connections, asks HTTP/2 peers to go away, closes idle HTTP/1.1 sockets, and
   * destroys whatever is still open after a short grace period. Resolves when all sockets are closed.
   */
  close(): Promise<void>;
}

/**
 * Listens on one TCP port and serves HTTP/1.1 (browsers: Connect, gRPC-Web, static files) and HTTP/2
 * (gRPC, Connect) with the same handler. In cleartext the two are told apart by the HTTP/2 client
 * preface; with `tls`, every connection is TLS and the protocol is the one agreed in the handshake
 * (ALPN: `h2` or `http/1.1`). The connection limits hold either way: a TLS handshake must finish
 * within the first-bytes timeout, and connections count against the caps from their TCP accept.
 */
export async function listenOnePort(
  handler: DualHandler,
  host: string,
  port: number,
  options: { limits?: Partial<ListenerLimits>; log?: Logger; tls?: ListenerTls } = {},
): Promise<OnePortServer> {
  const limits: ListenerLimits = { ...DEFAULT_LISTENER_LIMITS, ...options.limits };
  // Never listens itself: connections are handed to it once they pass the caps below. Built here, so
  // a bad certificate or key fails the start rather than every handshake.
  const secureServer = options.tls
    ? tls.createServer({
        cert: options.tls.cert,
        key: options.tls.key,
        minVersion: TLS_MIN_VERSION,
        ALPNProtocols: ALPN_PROTOCOLS,
        handshakeTimeout: limits.firstBytesTimeoutMs,
      })
    : undefined;
  const h1 = http.createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      connectionsCheckingInterval: limits.checkIntervalMs,
    },
    handler as http.RequestListener,
  );
  // Idle sockets are destroyed (the server has no 'timeout' listener of its own).
  h1.timeout = limits.idleTimeoutMs;
  // http.Server enforces headersTimeout and requestTimeout only once it has emitted 'listening' (it
  // starts tracking its connections then); this one never listens itself, so it is told here.
  h1.emit("listening");
  const h2 = http2.createServer(
    { settings: { maxConcurrentStreams: limits.unauthenticatedStreams } },
    handler as (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void,
  );
  const sockets = new Set<net.Socket>();
  const sessions = new Set<http2.ServerHttp2Session>();
  const budget = new ConnectionBudget<Connection>(limits);
  /** Each connection by its TCP socket and (with TLS) its TLS socket, and by its HTTP/2 session. */
  const bySocket = new WeakMap<net.Socket, Connection>();
  const bySession = new WeakMap<http2.ServerHttp2Session, Connection>();
  /** The connection whose socket is being handed to the HTTP/2 server (which makes its session at once). */
  let handingOver: Connection | undefined;
  h2.on("session", (session) => {
    const connection = handingOver;
    if (connection) {
      connection.session = session;
      bySession.set(session, connection);
    }
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
    // No frame either way for this long: the peer is gone or stalled (streams send heartbeats). It
    // is asked to go away (a live client reconnects cleanly), and dropped if it does not.
    session.setTimeout(limits.idleTimeoutMs, () => {
      session.close();
      setTimeout(() => session.destroy(), CLOSE_GRACE_MS).unref();
    });
  });
  h2.on("stream", (stream: http2.ServerHttp2Stream) => {
    const connection = bySession.get(stream.session as http2.ServerHttp2Session);
    if (!connection) return;
    connection.streams++;
    stream.once("close", () => connection.streams--);
  });
  /** Peers told about (in the log) since they last went under the cap: one line per crossing. */
  const warned = new Set<string>();
  // http.Server tracks idle keep-alive sockets only for servers that listen themselves, so
  // closeIdleConnections() cannot see ours: count HTTP/1.1 requests in flight per socket instead.
  const h1InFlight = new Map<net.Socket, number>();
  /** Sockets handed to the HTTP/2 server (the TCP socket, also under TLS); their sessions close them on shutdown. */
  const h2Sockets = new WeakSet<net.Socket>();
  /** With TLS: the TLS socket over each TCP socket, once its handshake is done (what HTTP reads and writes). */
  const served = new Map<net.Socket, net.Socket>();
  /**
   * With TLS: TCP sockets whose handshake runs, by peer address and port (unique among the open
   * connections of one listener; the TLS socket reports the same), with what to do once it is done.
   */
  const handshaking = new Map<string, { readonly socket: net.Socket; readonly done: () => void }>();
  const peerKey = (s: net.Socket) => `${s.remoteAddress}|${s.remotePort}`;
  // A failed or timed-out handshake (a scanner, a cleartext client, an untrusting browser): dropped.
  secureServer?.on("tlsClientError", (_err, secure) => secure.destroy());
  secureServer?.on("secureConnection", (secure: tls.TLSSocket) => {
    const key = peerKey(secure);
    const pending = handshaking.get(key);
    handshaking.delete(key);
    if (!pending) {
      secure.destroy();
      return;
    }
    pending.done();
    served.set(pending.socket, secure);
    secure.on("error", () => secure.destroy());
    if (secure.alpnProtocol === "h2") {
      h2Sockets.add(pending.socket);
      handingOver = bySocket.get(pending.socket);
      if (handingOver) bySocket.set(secure, handingOver);
      h2.emit("connection", secure);
      handingOver = undefined;
    } else {
      h1InFlight.set(secure, 0);
      const connection = bySocket.get(pending.socket);
      if (connection) bySocket.set(secure, connection);
      h1.emit("connection", secure);
    }
  });
  let closing = false;
  h1.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    const socket = req.socket;
    h1InFlight.set(socket, (h1InFlight.get(socket) ?? 0) + 1);
    res.once("close", () => {
      const left = (h1InFlight.get(socket) ?? 1) - 1;
      h1InFlight.set(socket, left);
      if (closing && left === 0) socket.end();
    });
  });

  // noDelay: terminal echo and streamed output are many small writes; Nagle's algorithm would hold
  // each behind the peer's delayed ACK (tens of milliseconds on loopback).
  const tcp = net.createServer({ noDelay: true }, (socket) => {
    const peer = socket.remoteAddress ?? "unknown";
    const connection: Connection = {
      peer,
      trusted: false,
      streams: 0,
      socket,
      busy: () => connection.streams > 0 || (h1InFlight.get(served.get(socket) ?? socket) ?? 0) > 0,
      drop: () => socket.destroy(),
    };
    const evictedBefore = budget.evicted;
    const refusal = budget.admit(connection);
    if (budget.evicted > evictedBefore && !warned.has(`evict:${peer}`)) {
      warned.add(`evict:${peer}`);
      options.log?.warn("dropping unauthenticated connections to make room", {
        peer,
        open: budget.countOf(peer),
        unauthenticated: budget.unauthenticated,
        perPeerLimit: limits.maxUnauthenticatedPerPeer,
        totalLimit: limits.maxUnauthenticated,
      });
    }
    if (refusal) {
      if (!warned.has(peer)) {
        warned.add(peer);
        options.log?.warn("refusing connections: too many authenticated connections open", {
          peer,
          open: budget.countOf(peer),
          total: budget.size,
          perPeerLimit: limits.maxConnectionsPerPeer,
          totalLimit: limits.maxConnections,
        });
      }
      socket.destroy();
      return;
    }
    bySocket.set(socket, connection);
    sockets.add(socket);
    const untrustedTimer = setInterval(() => {
      if (connection.trusted) clearInterval(untrustedTimer);
      else if (!connection.busy()) socket.destroy();
    }, limits.unauthenticatedIdleMs);
    connection.untrustedTimer = untrustedTimer;
    socket.once("close", () => {
      clearInterval(untrustedTimer);
      budget.closed(connection);
      sockets.delete(socket);
      h1InFlight.delete(served.get(socket) ?? socket);
      served.delete(socket);
      if (budget.countOf(peer) < limits.maxConnectionsPerPeer) warned.delete(peer);
      if (budget.countOf(peer) === 0) warned.delete(`evict:${peer}`);
    });
    // Counted from the connection's start, not from its last byte: a trickle cannot keep it.
    const sniffTimer = setTimeout(() => socket.destroy(), limits.firstBytesTimeoutMs);
    socket.once("close", () => clearTimeout(sniffTimer));
    socket.on("error", () => socket.destroy());
    if (secureServer) {
      socket.once("data", (chunk: Buffer) => {
        socket.pause();
        socket.unshift(chunk);
        if (chunk[0] !== TLS_HANDSHAKE_RECORD) {
          // The first-bytes timer stays: a peer that never reads the answer is dropped all the same.
          refuseCleartext(socket, chunk);
          return;
        }
        const key = peerKey(socket);
        handshaking.set(key, { socket, done: () => clearTimeout(sniffTimer) });
        socket.once("close", () => {
          if (handshaking.get(key)?.socket === socket) handshaking.delete(key);
        });
        secureServer.emit("connection", socket);
      });
      return;
    }
    let seen = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      seen = Buffer.concat([seen, chunk]);
      const n = Math.min(seen.length, H2_PREFACE.length);
      const isH2Prefix = seen.subarray(0, n).equals(H2_PREFACE.subarray(0, n));
      if (isH2Prefix && seen.length < H2_PREFACE.length) return; // wait for more bytes
      socket.off("data", onData);
      socket.pause();
      clearTimeout(sniffTimer);
      socket.unshift(seen);
      if (isH2Prefix) {
        // The HTTP/2 session reads the unshifted preface itself; resuming here would lose it.
        h2Sockets.add(socket);
        handingOver = bySocket.get(socket);
        h2.emit("connection", socket);
        handingOver = undefined;
      } else {
        h1InFlight.set(socket, 0);
        h1.emit("connection", socket);
        socket.resume();
      }
    };
    socket.on("data", onData);
  });

  function trust(connection: Connection): void {
    if (connection.trusted) return;
    connection.trusted = true;
    clearInterval(connection.untrustedTimer);
    budget.trusted(connection);
    connection.session?.settings({ maxConcurrentStreams: limits.maxStreams });
  }

  await new Promise<void>((resolve, reject) => {
    tcp.once("error", reject);
    tcp.listen(port, host, () => {
      tcp.off("error", reject);
      resolve();
    });
  });
  const address = tcp.address() as net.AddressInfo;
  const urlHost = address.family === "IPv6" ? `[${address.address}]` : address.address;

  return {
    host: address.address,
    port: address.port,
    url: `${secureServer ? "https" : "http"}://${urlHost}:${address.port}`,
    connectionOf: (req) => {
      const connection =
        "stream" in req ? bySession.get(req.stream.session as http2.ServerHttp2Session) : bySocket.get(req.socket);
      if (!connection) return undefined;
      // Only unauthenticated connections are dropped: an authenticated one carries someone's work.
      return { trust: () => trust(connection), drop: () => connection.trusted || connection.drop() };
    },
    evicted: () => budget.evicted,
    close: async () => {
      closing = true;
      const closed = new Promise<void>((resolve) => tcp.close(() => resolve()));
      // Stops its connection checks (it never listened, so it reports that; nothing else to do).
      h1.close(() => undefined);
      for (const session of sessions) session.close();
      // Idle HTTP/1.1 keep-alive sockets end now; sockets that have not said which protocol they speak
      // are dropped; HTTP/2 sockets end with their sessions.
      for (const socket of sockets) {
        const stream = served.get(socket) ?? socket;
        const inFlight = h1InFlight.get(stream);
        if (inFlight === 0) stream.end();
        else if (inFlight === undefined && !h2Sockets.has(socket)) socket.destroy();
      }
      const deadline = setTimeout(() => {
        for (const session of sessions) session.destroy();
        for (const socket of sockets) socket.destroy();
      }, CLOSE_GRACE_MS);
      // HTTP/1.1 sockets with a request in flight close once it ends; poll the set until empty.
      while (sockets.size > 0) await delay(SOCKET_DRAIN_POLL_MS);
      clearTimeout(deadline);
      await closed;
    },
  };
}
