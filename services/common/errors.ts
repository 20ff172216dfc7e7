import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { Logger } from "./log.js";

/**
 * Node.js error codes of a stream whose peer went away (reset, closed, destroyed): what the server
 * sees when a caller cancels or disconnects mid-stream. Not a fault of the server.
 */
const CALLER_GONE_CODES = new Set([
  "ABORT_ERR",
  "ECONNRESET",
  "EPIPE",
  "ERR_HTTP2_INVALID_STREAM",
  "ERR_HTTP2_STREAM_CANCEL",
  "ERR_HTTP2_STREAM_ERROR",
  "ERR_STREAM_DESTROYED",
  "ERR_STREAM_PREMATURE_CLOSE",
  "ERR_STREAM_WRITE_AFTER_END",
]);

/**
 * The one place unexpected failures are logged. Expected failures are `ConnectError`s and pass
 * through unchanged (a Node's error reaches the browser as the Node sent it). A caller that went
 * away (cancelled, disconnected, past its deadline) is not a failure: CANCELED, logged at debug
 * level without a stack. Anything else is logged with its cause and replaced by a plain INTERNAL
 * error, so internals never reach the client.
 */
export function createErrorInterceptor(log: Logger): Interceptor {
  const convert = (err: unknown, procedure: string, signal: AbortSignal): ConnectError => {
    if (err instanceof ConnectError) return err;
    if (signal.aborted || callerWentAway(err)) {
      log.debug("the caller went away", { procedure, reason: errorCode(err) });
      return new ConnectError("call cancelled", Code.Canceled);
    }
    log.error("unexpected error", {
      procedure,
      error: err instanceof Error ? (err.stack ?? err.message) : String(err),
    });
    return new ConnectError("internal error; the server log has the details", Code.Internal);
  };
  return (next) => async (req) => {
    const procedure = `${req.service.typeName}/${req.method.name}`;
    let res: Awaited<ReturnType<typeof next>>;
    try {
      res = await next(req);
    } catch (err) {
      throw convert(err, procedure, req.signal);
    }
    if (!res.stream) return res;
    const inner = res.message;
    return {
      ...res,
      message: (async function* () {
        try {
          yield* inner;
        } catch (err) {
          throw convert(err, procedure, req.signal);
        }
      })(),
    };
  };
}

/** True for the errors of a stream whose peer went away (see CALLER_GONE_CODES), or an abort. */
export function callerWentAway(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e.name === "AbortError" || CALLER_GONE_CODES.has(errorCode(e))) return true;
  }
  return false;
}

function errorCode(err: unknown): string {
  return err instanceof Error && "code" in err && typeof err.code === "string" ? err.code : "";
}
