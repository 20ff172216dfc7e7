import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError, createHandlerContext } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionService } from "../../gen/staragent/v1/session_service_pb.js";
import { createLogger } from "../common/log.js";
import { markRefusal } from "../common/refusals.js";
import { createLocalTransport } from "./local-transport.js";
import { NodeRegistry } from "./node-registry.js";

const TOKEN = "the-node-token-of-w1";
let home: string;
let registry: NodeRegistry;

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), "sa-registry-"));
  registry = new NodeRegistry({
    localTransport: createLocalTransport(() => undefined),
    home,
    log: createLogger("test", "error", () => undefined),
    commandLineNodes: [{ id: "w1", url: "http://127.0.0.1:1" }],
    commandLineToken: TOKEN,
    instanceId: "hub-under-test",
  });
  await registry.load();
});

afterAll(async () => {
  await registry?.close();
  await rm(home, { recursive: true, force: true });
});

/** A handler context for a caller with `timeoutMs` left, or none. */
function callerContext(timeoutMs?: number) {
  const caller = new AbortController();
  const ctx = createHandlerContext({
    service: SessionService,
    method: SessionService.method.getSession,
    protocolName: "grpc",
    requestMethod: "POST",
    url: "http://hub/staragent.v1.SessionService/GetSession",
    requestSignal: caller.signal,
    timeoutMs,
  });
  return { ctx, leave: () => caller.abort() };
}

describe("NodeRegistry.relayError", () => {
  const w1 = () => registry.get("w1");

  it("passes a Node's answer about the request on with its code, message and details, not its headers", () => {
    const answer = new ConnectError("session nodes/w1/sessions/x not found", Code.NotFound, { "x-node": "1" });
    const relayed = registry.relayError(w1(), answer, callerContext().ctx);
    expect([relayed.code, relayed.rawMessage, relayed.metadata.get("x-node")]).toEqual([
      Code.NotFound,
      "session nodes/w1/sessions/x not found",
      null,
    ]);
  });

  it("turns a Node rate-limiting the Hub into the Hub's own error naming the node, not the caller's", () => {
    const limited = markRefusal(
      new ConnectError(`too many failed authentication attempts (Bearer ${TOKEN})`, Code.ResourceExhausted),
      "credentials",
    );
    const relayed = registry.relayError(w1(), limited, callerContext().ctx);
    expect(relayed.code).toBe(Code.FailedPrecondition);
    expect(relayed.rawMessage).toMatch(/^the Hub cannot use node w1: the Node at http:\/\/127\.0\.0\.1:1 refuses/);
    expect(relayed.rawMessage).not.toContain(TOKEN);
    // An answer with the same code that is not a refusal still reaches the caller as it is.
    const full = new ConnectError("session x already has 8 terminal attachments", Code.ResourceExhausted);
    expect(registry.relayError(w1(), full, callerContext().ctx).code).toBe(Code.ResourceExhausted);
  });

  it("says UNAVAILABLE for a Node that cannot be reached", () => {
    const relayed = registry.relayError(
      w1(),
      new ConnectError("connect ECONNREFUSED", Code.Unavailable),
      callerContext().ctx,
    );
    expect([relayed.code, relayed.rawMessage]).toEqual([
      Code.Unavailable,
      "node w1 is unreachable: Unavailable: connect ECONNREFUSED",
    ]);
  });

  it("gives the caller its own end when it left or its deadline passed", () => {
    const { ctx, leave } = callerContext();
    leave();
    expect(registry.relayError(w1(), new ConnectError("x", Code.Canceled), ctx).code).toBe(Code.Canceled);
    const late = callerContext(1).ctx;
    expect(registry.relayError(w1(), new ConnectError("slow", Code.DeadlineExceeded), late).code).toBe(
      Code.DeadlineExceeded,
    );
  });
});
