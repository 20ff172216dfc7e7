import { getEventListeners } from "node:events";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeService } from "../../gen/staragent/v1/node_service_pb.js";
import { bearerInterceptor } from "../../services/common/bearer.js";
import { staragentRegistry } from "../../services/common/descriptors.js";
import { createLogger } from "../../services/common/log.js";
import { type RunningServer, startServer } from "../../services/common/server.js";

const TOKEN = "abort-listeners-token-0123456789";
/** Calls in flight at once: past Node's default of 10 listeners per signal, which warned at 11. */
const CONCURRENT_CALLS = 50;

describe("many concurrent calls on one server", () => {
  let server: RunningServer;
  let release: () => void = () => undefined;
  let started = 0;
  const allStarted = new Promise<void>((resolve) => {
    release = resolve;
  });
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => {
    finish = resolve;
  });
  beforeAll(async () => {
    server = await startServer({
      role: "hub",
      host: "127.0.0.1",
      port: 0,
      routes: (router) => {
        router.service(NodeService, {
          getNode: async () => {
            if (++started === CONCURRENT_CALLS) release();
            await finished;
            return {};
          },
        });
      },
      services: [NodeService],
      registry: staragentRegistry(),
      auth: { tokens: [{ token: TOKEN, kind: "user" }] },
      log: createLogger("test", "error"),
    });
  });
  afterAll(async () => {
    finish();
    await server?.close();
  });

  it("warn of no listener leak, and leave no listener behind on the shutdown signal", async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on("warning", onWarning);
    try {
      const client = createClient(
        NodeService,
        createGrpcTransport({ baseUrl: server.url, interceptors: [bearerInterceptor(TOKEN)] }),
      );
      const calls = Array.from({ length: CONCURRENT_CALLS }, () => client.getNode({ name: "nodes/x" }));
      await allStarted;
      // One listener per call in flight: the count Connect links, and exactly that.
      expect(getEventListeners(server.shutdownSignal, "abort")).toHaveLength(CONCURRENT_CALLS);
      finish();
      await Promise.all(calls);
      expect(getEventListeners(server.shutdownSignal, "abort")).toHaveLength(0);
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((w) => w.startsWith("MaxListenersExceededWarning"))).toEqual([]);
    } finally {
      process.off("warning", onWarning);
    }
  });
});
