import http from "node:http";
import http2 from "node:http2";
import net from "node:net";

/** The HTTP/2 client preface every h2c connection starts with. */
const H2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
/** How long a graceful close waits for HTTP/2 sessions and requests in flight before destroying them. */
const CLOSE_GRACE_MS = 2_000;
/** How long a new connection may take to send its first bytes before it is dropped. */
const FIRST_BYTES_TIMEOUT_MS = 10_000;

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
  /** `http://host:port`, with IPv6 hosts in brackets. */
  readonly url: string;
  /**
   * Stops accepting connections, asks HTTP/2 peers to go away, closes idle HTTP/1.1 sockets, and
   * destroys whatever is still open after a short grace period. Resolves when all sockets are closed.
   */
  close(): Promise<void>;
}

/**
 * Listens on one TCP port and serves HTTP/1.1 (browsers: Connect, gRPC-Web, static files) and HTTP/2
 * cleartext (gRPC, Connect) with the same handler, telling them apart by the HTTP/2 client preface.
 */
export async function listenOnePort(handler: DualHandler, host: string, port: number): Promise<OnePortServer> {
  const h1 = http.createServer(handler as http.RequestListener);
  const h2 = http2.createServer({}, handler as (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void);
  const sockets = new Set<net.Socket>();
  const sessions = new Set<http2.ServerHttp2Session>();
  h2.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  // http.Server tracks idle keep-alive sockets only for servers that listen themselves, so
  // closeIdleConnections() cannot see ours: count HTTP/1.1 requests in flight per socket instead.
  const h1InFlight = new Map<net.Socket, number>();
  /** Sockets handed to the HTTP/2 server; their sessions close them on shutdown. */
  const h2Sockets = new WeakSet<net.Socket>();
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
    sockets.add(socket);
    socket.once("close", () => {
      sockets.delete(socket);
      h1InFlight.delete(socket);
    });
    socket.setTimeout(FIRST_BYTES_TIMEOUT_MS, () => socket.destroy());
    let seen = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      seen = Buffer.concat([seen, chunk]);
      const n = Math.min(seen.length, H2_PREFACE.length);
      const isH2Prefix = seen.subarray(0, n).equals(H2_PREFACE.subarray(0, n));
      if (isH2Prefix && seen.length < H2_PREFACE.length) return; // wait for more bytes
      socket.off("data", onData);
      socket.pause();
      socket.setTimeout(0);
      socket.unshift(seen);
      if (isH2Prefix) {
        // The HTTP/2 session reads the unshifted preface itself; resuming here would lose it.
        h2Sockets.add(socket);
        h2.emit("connection", socket);
      } else {
        h1InFlight.set(socket, 0);
        h1.emit("connection", socket);
        socket.resume();
      }
    };
    socket.on("data", onData);
    socket.on("error", () => socket.destroy());
  });

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
    url: `http://${urlHost}:${address.port}`,
    close: async () => {
      closing = true;
      const closed = new Promise<void>((resolve) => tcp.close(() => resolve()));
      for (const session of sessions) session.close();
      // Idle HTTP/1.1 keep-alive sockets end now; sockets that have not said which protocol they speak
      // are dropped; HTTP/2 sockets end with their sessions.
      for (const socket of sockets) {
        const inFlight = h1InFlight.get(socket);
        if (inFlight === 0) socket.end();
        else if (inFlight === undefined && !h2Sockets.has(socket)) socket.destroy();
      }
      const deadline = setTimeout(() => {
        for (const session of sessions) session.destroy();
        for (const socket of sockets) socket.destroy();
      }, CLOSE_GRACE_MS);
      // HTTP/1.1 sockets with a request in flight close once it ends; poll the set until empty.
      while (sockets.size > 0) await new Promise((r) => setTimeout(r, 20));
      clearTimeout(deadline);
      await closed;
    },
  };
}
