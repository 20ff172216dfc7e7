import { type ConnectRouter, createConnectRouter, type Transport } from "@connectrpc/connect";
import {
  createUniversalHandlerClient,
  type UniversalHandler,
  type UniversalHandlerFn,
} from "@connectrpc/connect/protocol";
import { createTransport } from "@connectrpc/connect/protocol-connect";
import { onAbort } from "../common/disposables.js";
import { wrapHandler } from "../common/wrap-handler.js";

/**
 * The Hub's in-process transport to its own machine: the machine's routes called without a network,
 * like `createRouterTransport`, with one difference that matters for streams. An in-memory client
 * that gives up (deadline, abort) before or while a server stream answers simply stops reading it,
 * so the handler's generator would stay parked at its `yield` for good and its `finally` (which ends
 * an attachment's tmux client and pty, or a watch's subscription) would never run. Here every
 * response stream is ended (`return()`) as soon as its caller's signal aborts, as an HTTP/2 server
 * does when a stream is reset.
 */
export function createLocalTransport(routes: (router: ConnectRouter) => void): Transport {
  const router = createConnectRouter({ connect: true });
  routes(router);
  return createTransport({
    httpClient: createUniversalHandlerClient(router.handlers.map(endWithCaller)),
    baseUrl: "https://in-process",
    useBinaryFormat: true,
    interceptors: [],
    acceptCompression: [],
    sendCompression: null,
    compressMinBytes: Number.MAX_SAFE_INTEGER,
    readMaxBytes: Number.MAX_SAFE_INTEGER,
    writeMaxBytes: Number.MAX_SAFE_INTEGER,
  });
}

/** `handler`, whose response stream is ended once the request's signal aborts. */
function endWithCaller(handler: UniversalHandler): UniversalHandler {
  const handle: UniversalHandlerFn = async (req) => {
    const res = await handler(req);
    if (res.body === undefined) return res;
    const iterator = res.body[Symbol.asyncIterator]();
    const end = () => {
      // Queued behind a pending read by the generator protocol; the handler sees its signal abort.
      void iterator.return?.().catch(() => undefined);
    };
    onAbort(req.signal, end);
    return { ...res, body: { [Symbol.asyncIterator]: () => iterator } };
  };
  return wrapHandler(handler, handle);
}
