import {
  type CallOptions,
  Code,
  ConnectError,
  type ContextValues,
  createContextKey,
  createContextValues,
  type HandlerContext,
  type Transport,
} from "@connectrpc/connect";
import { nextVia, VIA_HEADER } from "../common/hops.js";

/**
 * The Hub call that a call to a Node is made for. Every call through a Node's client carries it (see
 * `forCaller`): the Node's client takes the caller's signal, deadline and hops from it.
 */
const callerKey = createContextKey<HandlerContext | undefined>(undefined, {
  description: "the Hub call a Node call is made for",
});

/**
 * The options of a call to a Node on behalf of the Hub call `ctx`: a Hub service calls a Node's
 * client with these and nothing else; the client does the rest (`nodeClientTransport`). `timeoutMs`
 * caps the caller's remaining deadline (lists across nodes), `signal` replaces the caller's signal
 * (one that the Hub aborts itself as well as with the caller: a relay it ends, a watch attempt).
 */
export function forCaller(
  ctx: HandlerContext,
  options: { timeoutMs?: number; signal?: AbortSignal } = {},
): CallOptions {
  return { ...options, contextValues: createContextValues().set(callerKey, ctx) };
}

/** What the client of one Node asks of the registry around each call. */
export interface NodeCallHooks {
  /** Throws the Hub's own error, at once, when the Hub knows it cannot use the Node now. */
  admit(): void;
  /** The Node answered (a unary reply, or each message of a stream). */
  seen(): void;
  /** The error the caller should see for a failed call to the Node. */
  relay(error: unknown, ctx: HandlerContext): ConnectError;
  /** This Hub's instance id, added to `staragent-via` so calls that would come back to it are refused. */
  readonly instanceId: string;
}

/**
 * The transport of one Node's clients in the Hub: every call to the Node, unary or streaming, takes
 * four steps here, once for all the Hub's services:
 * - admission: a Node the Hub knows it cannot use is refused before anything is sent (`hooks.admit`);
 * - deadline pass-on: the caller's signal and remaining deadline (capped by the call's own
 *   `timeoutMs`) go to the Node, which then stops too, with this Hub added to `staragent-via`;
 * - error relaying: a failure reaches the caller as `hooks.relay` makes it (the Node's answer
 *   unchanged, the Hub's problems with the Node as the Hub's error, the caller's own end as such);
 * - seen bookkeeping: each answer counts as hearing from the Node (`hooks.seen`).
 * It wraps the transport rather than being a connect-es interceptor because connect-es fixes a call's
 * deadline (its signal and timeout header) before interceptors run.
 */
export function nodeClientTransport(inner: Transport, hooks: NodeCallHooks): Transport {
  /** Admits a call and passes its caller's signal, deadline and hops on; `send` makes it to the Node. */
  const call = async <R>(
    method: { readonly name: string },
    contextValues: ContextValues | undefined,
    options: { signal?: AbortSignal; timeoutMs?: number; header?: ConstructorParameters<typeof Headers>[0] },
    send: (pass: ReturnType<typeof passOn>, ctx: HandlerContext) => Promise<R>,
  ): Promise<R> => {
    const ctx = callerOf(contextValues, method.name);
    // The Hub's own refusal, already worded for the caller: not relayed as the Node's.
    hooks.admit();
    try {
      return await send(passOn(ctx, hooks.instanceId, options.signal, options.timeoutMs, options.header), ctx);
    } catch (err) {
      throw hooks.relay(err, ctx);
    }
  };
  return {
    unary: (method, signal, timeoutMs, header, input, contextValues) =>
      call(method, contextValues, { signal, timeoutMs, header }, async (pass) => {
        const res = await inner.unary(method, pass.signal, pass.timeoutMs, pass.header, input, contextValues);
        hooks.seen();
        return res;
      }),
    stream: (method, signal, timeoutMs, header, input, contextValues) =>
      call(method, contextValues, { signal, timeoutMs, header }, async (pass, ctx) => {
        const res = await inner.stream(method, pass.signal, pass.timeoutMs, pass.header, input, contextValues);
        return { ...res, message: relayed(res.message, hooks, ctx) };
      }),
  };
}

/** A Node's stream of answers, each counted as seen, its failure relayed. */
async function* relayed<T>(messages: AsyncIterable<T>, hooks: NodeCallHooks, ctx: HandlerContext): AsyncIterable<T> {
  try {
    for await (const message of messages) {
      hooks.seen();
      yield message;
    }
  } catch (err) {
    throw hooks.relay(err, ctx);
  }
}

/** The Hub call behind a Node call; a call made without `forCaller` is the Hub's bug. */
function callerOf(values: ContextValues | undefined, method: string): HandlerContext {
  const ctx = values?.get(callerKey);
  if (!ctx) throw new ConnectError(`the Hub called a Node's ${method} without its caller`, Code.Internal);
  return ctx;
}

/**
 * A Node call's signal, deadline and headers for the caller of `ctx`: its signal (or the call's own),
 * its remaining deadline capped at the call's `capMs`, and `instanceId` added to `staragent-via`.
 */
export function passOn(
  ctx: HandlerContext,
  instanceId: string,
  signal: AbortSignal | undefined,
  capMs: number | undefined,
  header?: ConstructorParameters<typeof Headers>[0],
): { signal: AbortSignal; timeoutMs: number | undefined; header: Headers } {
  const remaining = ctx.timeoutMs();
  const timeoutMs =
    remaining === undefined
      ? capMs
      : capMs === undefined
        ? Math.max(1, remaining)
        : Math.max(1, Math.min(remaining, capMs));
  const headers = new Headers(header);
  headers.set(VIA_HEADER, nextVia(ctx.requestHeader.get(VIA_HEADER), instanceId));
  return { signal: signal ?? ctx.signal, timeoutMs, header: headers };
}
