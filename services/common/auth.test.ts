import { createClient, createRouterTransport } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { NodeService } from "../../gen/staragent/v1/node_service_pb.js";
import { outcomeOf } from "../../test/support/codes.js";
import { type AuthPolicy, createAuthInterceptor } from "./auth.js";
import { originKey, principalKey } from "./context-keys.js";
import { FailureSlowdown } from "./failure-slowdown.js";
import { registerHealth } from "./health.js";
import { createLogger } from "./log.js";
import { OwnOrigins } from "./own-origins.js";

const USER_TOKEN = "user-token-0123456789abcdef";
const NODE_TOKEN = "node-token-0123456789abcdef";

/** A transport whose one NodeService method answers with the caller's principal kind. */
function transportWith(
  slowdown: FailureSlowdown,
  tokens: AuthPolicy["tokens"] = [{ token: USER_TOKEN, kind: "user" }],
  origin = "",
) {
  const lines: string[] = [];
  const log = createLogger("test", "debug", (line) => lines.push(line));
  const origins = new OwnOrigins();
  origins.bind("127.0.0.1", 8080);
  const transport = createRouterTransport(
    (router) => {
      router.service(NodeService, {
        getNode(_req, ctx) {
          return { node: { name: `nodes/${ctx.values.get(principalKey).kind}` } };
        },
      });
      registerHealth(router, [NodeService.typeName]);
    },
    {
      router: {
        interceptors: [
          (next) => (req) => {
            req.contextValues.set(originKey, origin);
            return next(req);
          },
          createAuthInterceptor({ tokens }, { slowdown, origins }, log),
        ],
      },
    },
  );
  return { transport, lines };
}

function bearer(token: string) {
  return { headers: { authorization: `Bearer ${token}` } };
}

describe("createAuthInterceptor", () => {
  it("answers health without a token", async () => {
    const { transport } = transportWith(new FailureSlowdown());
    const res = await createClient(Health, transport).check({ service: "" });
    expect(res.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
  });

  it("refuses a missing, malformed or wrong token with UNAUTHENTICATED and logs no token", async () => {
    const { transport, lines } = transportWith(new FailureSlowdown());
    const client = createClient(NodeService, transport);
    expect(await outcomeOf(client.getNode({ name: "nodes/x" }))).toBe("Unauthenticated");
    expect(await outcomeOf(client.getNode({ name: "nodes/x" }, bearer("wrong-token")))).toBe("Unauthenticated");
    expect(
      await outcomeOf(client.getNode({ name: "nodes/x" }, { headers: { authorization: `Basic ${USER_TOKEN}` } })),
    ).toBe("Unauthenticated");
    expect(await outcomeOf(client.getNode({ name: "nodes/x" }, bearer(`${USER_TOKEN}x`)))).toBe("Unauthenticated");
    // Failures 1, 2 and 4 are logged (one line per power of two, so a flood cannot flood the log).
    expect(lines.filter((l) => l.includes("authentication failed"))).toHaveLength(3);
    expect(lines.join("\n")).not.toContain(USER_TOKEN);
  });

  it("grants the kind of the token that matched", async () => {
    const { transport } = transportWith(new FailureSlowdown(), [
      { token: USER_TOKEN, kind: "user" },
      { token: NODE_TOKEN, kind: "node" },
    ]);
    const client = createClient(NodeService, transport);
    expect((await client.getNode({}, bearer(USER_TOKEN))).node?.name).toBe("nodes/user");
    expect((await client.getNode({}, bearer(NODE_TOKEN))).node?.name).toBe("nodes/node");
  });

  it("never delays or refuses the right token, however many failures came before", async () => {
    const { transport } = transportWith(new FailureSlowdown({ freeFailures: 2, firstDelayMs: 60_000 }));
    const client = createClient(NodeService, transport);
    expect(await outcomeOf(client.getNode({}, bearer("wrong-1")))).toBe("Unauthenticated");
    expect(await outcomeOf(client.getNode({}, bearer("wrong-2")))).toBe("Unauthenticated");
    // The third failure waits a minute; the right token meanwhile is answered at once.
    const gone = new AbortController();
    const held = outcomeOf(client.getNode({}, { ...bearer("wrong-3"), signal: gone.signal }));
    expect((await client.getNode({}, bearer(USER_TOKEN))).node?.name).toBe("nodes/user");
    expect(await outcomeOf(createClient(Health, transport).check({ service: "" }))).toBe("OK");
    expect(await Promise.race([held, Promise.resolve("still held")])).toBe("still held");
    // A caller that goes away is let go at once.
    gone.abort();
    expect(await held).toBe("Canceled");
  });

  it("refuses a request from a web page of another origin before looking at its token", async () => {
    const slowdown = new FailureSlowdown();
    const { transport } = transportWith(slowdown, undefined, "http://evil.example");
    const client = createClient(NodeService, transport);
    expect(await outcomeOf(client.getNode({}, bearer(USER_TOKEN)))).toBe("PermissionDenied");
    expect(await outcomeOf(client.getNode({}, bearer("wrong")))).toBe("PermissionDenied");
    expect(slowdown.trackedPeers).toBe(0);
    const own = transportWith(new FailureSlowdown(), undefined, "http://127.0.0.1:8080");
    expect((await createClient(NodeService, own.transport).getNode({}, bearer(USER_TOKEN))).node?.name).toBe(
      "nodes/user",
    );
  });
});
