import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { Logger } from "./log.js";

/**
 * The one place unexpected failures are logged. Expected failures are `ConnectError`s and pass
 * through unchanged (a Node's error reaches the browser as the Node sent it); anything else is logged
 * with its cause and replaced by a plain INTERNAL error, so internals never reach the client.
 */
export function createErrorInterceptor(log: Logger): Interceptor {
  const convert = (err: unknown, procedure: string): ConnectError => {
    if (err instanceof ConnectError) return err;
    if (err instanceof Error && err.name === "AbortError") return new ConnectError("call cancelled", Code.Canceled);
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
      throw convert(err, procedure);
    }
    if (!res.stream) return res;
    const inner = res.message;
    return {
      ...res,
      message: (async function* () {
        try {
          yield* inner;
        } catch (err) {
          throw convert(err, procedure);
        }
      })(),
    };
  };
}
