import net from "node:net";
import type { DescService } from "@bufbuild/protobuf";
import { type Client, createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { bearerInterceptor } from "../../services/common/bearer.js";

/**
 * A gRPC transport whose connections come from `localAddress` (any address in 127.0.0.0/8 is this
 * machine). Servers rate-limit failed authentication per peer address, so tests that fail on
 * purpose use addresses of their own and cannot lock each other out.
 */
export function transportFrom(url: string, localAddress: string, token?: string): Transport {
  const target = new URL(url);
  const interceptors: Interceptor[] = token === undefined ? [] : [bearerInterceptor(token)];
  return createGrpcTransport({
    baseUrl: url,
    interceptors,
    nodeOptions: {
      createConnection: () => net.connect({ host: target.hostname, port: Number(target.port), localAddress }),
    },
  });
}

/** A client of `service` whose calls come from `localAddress` (see transportFrom). */
export function clientFrom<S extends DescService>(
  service: S,
  url: string,
  localAddress: string,
  token?: string,
): Client<S> {
  return createClient(service, transportFrom(url, localAddress, token));
}
