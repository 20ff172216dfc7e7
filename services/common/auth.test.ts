import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { NodeService } from "../../gen/staragent/v1/node_service_pb.js";
import { type AuthPolicy, createAuthInterceptor, FailureLimiter } from "./auth.js";
import { principalKey } from "./context-keys.js";
import { registerHealth } from "./health.js";
import { createLogger } from "./log.js";

const USER_TOKEN = "user-token-0123456789abcdef";
const NODE_TOKEN = "node-token-0123456789abcdef";

/** A transport whose one NodeService method answers with the caller's principal kind. */
function transportWith(limiter: FailureLimiter, tokens: AuthPolicy["tokens"] = [{ token: USER_TOKEN, kind: "user" }]) {
  const lines: string[] = [];
  const log = createLogger("test", "debug", (line) => lines.push(line));
  const transport = createRouterTransport(
    (router) => {
      router.service(NodeService, {
        getNode(_req, ctx) {
          return { node: { name: `nodes/${ctx.values.get(principalKey).kind}` } };
        },
      });
      registerHealth(router, [NodeService.typeName]);
    },
    { router: { interceptors: [createAuthInterceptor({ tokens }, limiter, log)] } },
  );
  return { transport, lines };
}

function bearer(token: string) {
  return { headers: { authorization: `Bearer ${token}` } };
}

async function codeOf(call: Promise<unknown>): Promise<Code | "ok"> {
  try {
    await call;
    return "ok";
  } catch (err) {
    return ConnectError.from(err).code;
  }
}

describe("FailureLimiter", () => {
  it("lets a peer try until it reaches the limit, then refuses it until the window passes", () => {
    const limiter = new FailureLimiter(3, 1_000);
    const t0 = 1_000_000;
    limiter.recordFailure("a", t0);
    limiter.recordFailure("a", t0 + 1);
    expect(limiter.retryAfterMs("a", t0 + 2)).toBe(0);
    limiter.recordFailure("a", t0 + 2);
    expect(limiter.retryAfterMs("a", t0 + 2)).toBe(998);
    expect(limiter.retryAfterMs("b", t0 + 2)).toBe(0);
    expect(limiter.retryAfterMs("a", t0 + 1_000)).toBe(0);
  });

  it("starts a fresh window after the old one ends", () => {
    const limiter = new FailureLimiter(2, 1_000);
    limiter.recordFailure("a", 0);
    limiter.recordFailure("a", 1_500);
    expect(limiter.retryAfterMs("a", 1_600)).toBe(0);
    limiter.recordFailure("a", 1_700);
    expect(limiter.retryAfterMs("a", 1_700)).toBe(800);
  });
});

describe("createAuthInterceptor", () => {
  it("answers health without a token", async () => {
    const { transport } = transportWith(new FailureLimiter());
    const res = await createClient(Health, transport).check({ service: "" });
    expect(res.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
  });

  it("refuses a missing, malformed or wrong token with UNAUTHENTICATED and logs no token", async () => {
    const { transport, lines } = transportWith(new FailureLimiter());
    const client = createClient(NodeService, transport);
    expect(await codeOf(client.getNode({ name: "nodes/x" }))).toBe(Code.Unauthenticated);
    expect(await codeOf(client.getNode({ name: "nodes/x" }, bearer("wrong-token")))).toBe(Code.Unauthenticated);
    expect(
      await codeOf(client.getNode({ name: "nodes/x" }, { headers: { authorization: `Basic ${USER_TOKEN}` } })),
    ).toBe(Code.Unauthenticated);
    expect(await codeOf(client.getNode({ name: "nodes/x" }, bearer(`${USER_TOKEN}x`)))).toBe(Code.Unauthenticated);
    expect(lines.filter((l) => l.includes("authentication failed"))).toHaveLength(4);
    expect(lines.join("\n")).not.toContain(USER_TOKEN);
  });

  it("grants the kind of the token that matched", async () => {
    const { transport } = transportWith(new FailureLimiter(), [
      { token: USER_TOKEN, kind: "user" },
      { token: NODE_TOKEN, kind: "node" },
    ]);
    const client = createClient(NodeService, transport);
    expect((await client.getNode({}, bearer(USER_TOKEN))).node?.name).toBe("nodes/user");
    expect((await client.getNode({}, bearer(NODE_TOKEN))).node?.name).toBe("nodes/node");
  });

  it("refuses every call from a peer over the failure limit with RESOURCE_EXHAUSTED, health excepted", async () => {
    const { transport } = transportWith(new FailureLimiter(2, 60_000));
    const client = createClient(NodeService, transport);
    expect(await codeOf(client.getNode({}, bearer("wrong-1")))).toBe(Code.Unauthenticated);
    expect(await codeOf(client.getNode({}, bearer("wrong-2")))).toBe(Code.Unauthenticated);
    expect(await codeOf(client.getNode({}, bearer("wrong-3")))).toBe(Code.ResourceExhausted);
    expect(await codeOf(client.getNode({}, bearer(USER_TOKEN)))).toBe(Code.ResourceExhausted);
    expect(await codeOf(createClient(Health, transport).check({ service: "" }))).toBe("ok");
  });
});
