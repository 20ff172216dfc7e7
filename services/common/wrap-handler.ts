import type { UniversalHandler, UniversalHandlerFn } from "@connectrpc/connect/protocol";

/**
 * `fn` carrying `handler`'s description (its service, method, path, protocols and content types), so a
 * function that wraps a handler (checking requests, ending streams with their caller) stands in for
 * it wherever Connect routes by that description.
 */
export function wrapHandler(handler: UniversalHandler, fn: UniversalHandlerFn): UniversalHandler {
  return Object.assign(fn, {
    protocolNames: handler.protocolNames,
    service: handler.service,
    method: handler.method,
    requestPath: handler.requestPath,
    allowedMethods: handler.allowedMethods,
    supportedContentType: handler.supportedContentType,
  });
}
