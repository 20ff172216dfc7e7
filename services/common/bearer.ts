import type { Interceptor } from "@connectrpc/connect";

/**
 * A client interceptor sending `token` as `authorization: Bearer <token>` on every call: how the Hub
 * reaches its Nodes, how the CLI and scripts reach the Hub. The one place the header is written.
 */
export function bearerInterceptor(token: string): Interceptor {
  return (next) => (req) => {
    req.header.set("authorization", `Bearer ${token}`);
    return next(req);
  };
}
