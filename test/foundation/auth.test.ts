import http from "node:http";
import {
  create,
  type DescMethod,
  type DescMethodStreaming,
  type DescMethodUnary,
  type DescService,
} from "@bufbuild/protobuf";
import { Code, ConnectError, type Transport } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { ServerReflection } from "../../gen/grpc/reflection/v1/reflection_pb.js";
import { SessionService } from "../../gen/staragent/v1/session_service_pb.js";
import { staragentRegistry } from "../../services/common/descriptors.js";
import { type ServerProcess, startServerProcess } from "../support/servers.js";
import { clientFrom, transportFrom } from "./from-address.js";
import { failureOf, type HubFixture, startHubFixture, testToken } from "./hub-fixture.js";

/** Failures a peer may make before they are slowed down (DEFAULT_SLOWDOWN in services/common). */
const FREE_FAILURES = 5;
/** A streaming call refused at once answers in milliseconds; one that was let in would run until this. */
const STREAM_CALL_TIMEOUT_MS = 5_000;

/** Calls `method` once with an empty request; resolves with the gRPC code it ended with. */
async function callOnce(transport: Transport, method: DescMethod, header: Record<string, string>): Promise<string> {
  const input = create(method.input);
  try {
    if (isUnary(method)) {
      await transport.unary(method, undefined, undefined, header, input);
    } else if (isStreaming(method)) {
      const res = await transport.stream(
        method,
        undefined,
        STREAM_CALL_TIMEOUT_MS,
        header,
        (async function* () {
          yield input;
        })(),
      );
      for await (const _ of res.message) break;
    } else {
      throw new Error(`unknown method kind ${method.methodKind}`);
    }
    return "OK";
  } catch (err) {
    return Code[ConnectError.from(err).code];
  }
}

function isUnary(method: DescMethod): method is DescMethodUnary {
  return method.methodKind === "unary";
}

function isStreaming(method: DescMethod): method is DescMethodStreaming {
  return method.methodKind !== "unary";
}

/** The services a server lists through reflection (asked with a valid token). */
async function listedServices(url: string, token: string): Promise<DescService[]> {
  const client = clientFrom(ServerReflection, url, "127.0.0.1", token);
  const names: string[] = [];
  for await (const res of client.serverReflectionInfo(
    (async function* () {
      yield { messageRequest: { case: "listServices" as const, value: "" } };
    })(),
  )) {
    if (res.messageResponse.case === "listServicesResponse")
      names.push(...res.messageResponse.value.service.map((s) => s.name));
  }
  const registry = staragentRegistry();
  return names.map((name) => {
    const service = registry.getService(name);
    if (!service) throw new Error(`reflection lists ${name}, which the registry does not describe`);
    return service;
  });
}

/** One HTTP/1.1 request from `localAddress`; resolves with status, headers and body. */
function request(
  url: string,
  localAddress: string,
  options: { method?: string; headers?: Record<string, string>; body?: string },
) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const req = http.request(url, { method: options.method ?? "GET", headers: options.headers, localAddress });
    req.on("response", (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => {
        body += c;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

describe("authentication on a real Hub and Node", () => {
  let f: HubFixture;
  let node: ServerProcess;
  beforeAll(async () => {
    f = await startHubFixture();
    await f.tmux.run("new-session", "-d", "-s", "visible", "sleep 600");
    node = await startServerProcess({
      kind: "node",
      tmuxSocket: f.tmux.socketName,
      token: testToken(),
      args: ["--name", "n1"],
    });
  });
  afterAll(async () => {
    await node?.stop();
    await f?.close();
  });

  it("refuses calls without a token or with a wrong one on every service but health", async () => {
    const services = (await listedServices(f.hub.url, f.hub.token)).filter((s) => s.typeName !== Health.typeName);
    expect(services.map((s) => s.typeName)).toEqual(
      expect.arrayContaining([
        "staragent.v1.SessionService",
        "staragent.v1.NodeService",
        "grpc.reflection.v1.ServerReflection",
      ]),
    );
    // Each method from an address of its own: the sweep stays within the failures answered at once.
    for (const [i, service] of services.entries()) {
      expect(service.methods.length).toBeLessThan(40);
      for (const [j, method] of service.methods.entries()) {
        const transport = transportFrom(f.hub.url, `127.0.1.${i * 40 + j + 1}`);
        const header: Record<string, string> = j % 2 === 0 ? {} : { authorization: `Bearer ${f.hub.token}x` };
        expect(`${method.parent.typeName}/${method.name}: ${await callOnce(transport, method, header)}`).toBe(
          `${method.parent.typeName}/${method.name}: Unauthenticated`,
        );
      }
    }
  });

  it("answers health without a token, on the Hub and on a Node", async () => {
    for (const url of [f.hub.url, node.url]) {
      const health = clientFrom(Health, url, "127.0.2.1");
      expect((await health.check({ service: "" })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
      expect((await health.check({ service: "staragent.v1.SessionService" })).status).toBe(
        HealthCheckResponse_ServingStatus.SERVING,
      );
    }
  });

  it("a Node accepts its node token and rejects the Hub's user token; the Hub rejects the node token", async () => {
    const withNodeToken = clientFrom(SessionService, node.url, "127.0.3.1", node.token);
    expect((await withNodeToken.listSessions({ parent: "nodes/n1" })).unreachable).toEqual([]);
    const withUserToken = clientFrom(SessionService, node.url, "127.0.3.1", f.hub.token);
    expect((await failureOf(withUserToken.listSessions({ parent: "nodes/n1" }))).code).toBe("Unauthenticated");
    const hubWithNodeToken = clientFrom(SessionService, f.hub.url, "127.0.3.1", node.token);
    expect((await failureOf(hubWithNodeToken.listSessions({}))).code).toBe("Unauthenticated");
  });

  it("slows a peer's repeated failures down but never the right token from the same address", async () => {
    const wrong = clientFrom(SessionService, node.url, "127.0.4.1", "wrong-token-0123456789");
    for (let i = 0; i < FREE_FAILURES; i++) {
      expect((await failureOf(wrong.listSessions({}))).code).toBe("Unauthenticated");
    }
    // The next failures are held back, one after another; the right token is answered meanwhile.
    const gone = new AbortController();
    const held = Array.from({ length: 4 }, () =>
      wrong.listSessions({}, { signal: gone.signal }).then(
        () => "OK",
        (err: unknown) => Code[ConnectError.from(err).code],
      ),
    );
    const right = clientFrom(SessionService, node.url, "127.0.4.1", node.token);
    expect((await right.listSessions({})).sessions).toBeDefined();
    expect(await Promise.race([held[3], Promise.resolve("held")])).toBe("held");
    expect(await held[0]).toBe("Unauthenticated");
    gone.abort();
    expect(await Promise.all(held.slice(1))).toEqual(["Canceled", "Canceled", "Canceled"]);
    expect((await clientFrom(Health, node.url, "127.0.4.1").check({ service: "" })).status).toBe(
      HealthCheckResponse_ServingStatus.SERVING,
    );
    expect(node.stderr()).not.toContain(node.token);
  });

  it("logs a browser in with an HttpOnly SameSite=Strict cookie that only works from the Hub's own origin", async () => {
    const from = "127.0.5.1";
    const failed = await request(`${f.hub.url}/login`, from, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "token=wrong",
    });
    expect(failed.status).toBe(303);
    expect(failed.headers.location).toBe("/login?failed=1");
    expect(failed.headers["set-cookie"]).toBeUndefined();

    const login = await request(`${f.hub.url}/login`, from, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: f.hub.token }).toString(),
    });
    expect(login.status).toBe(303);
    expect(login.headers.location).toBe("/");
    const setCookie = login.headers["set-cookie"]?.[0] ?? "";
    expect(setCookie).toMatch(/^staragent_session=[^;]+; HttpOnly; SameSite=Strict; Path=\/; Max-Age=\d+$/);
    // The page logs in asking for JSON: the cookie, and the key it keeps in its origin's storage.
    const paged = await request(`${f.hub.url}/login`, from, {
      method: "POST",
      headers: { accept: "application/json", "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: f.hub.token }).toString(),
    });
    expect(paged.status).toBe(200);
    const cookie = (paged.headers["set-cookie"]?.[0] ?? "").split(";")[0] ?? "";
    const { key } = JSON.parse(paged.body) as { key: string };

    const list = (headers: Record<string, string>) =>
      request(`${f.hub.url}/staragent.v1.SessionService/ListSessions`, from, {
        method: "POST",
        headers: { "content-type": "application/json", cookie, "staragent-login-key": key, ...headers },
        body: "{}",
      });
    const own = await list({ origin: f.hub.url });
    expect(own.status).toBe(200);
    expect(JSON.parse(own.body).sessions.map((s: { name: string }) => s.name)).toEqual([
      "nodes/local/sessions/visible",
    ]);
    const foreign = await list({ origin: "http://evil.example" });
    expect(foreign.status).toBe(403);
    expect(JSON.parse(foreign.body).code).toBe("permission_denied");
    expect((await list({})).status).toBe(401);

    expect((await request(`${f.hub.url}/`, from, {})).headers.location).toBe("/login");
    expect((await request(`${f.hub.url}/`, from, { headers: { cookie } })).status).toBe(200);

    const logout = await request(`${f.hub.url}/logout`, from, { method: "POST", headers: { cookie } });
    expect(logout.status).toBe(303);
    expect(logout.headers["set-cookie"]?.[0]).toMatch(/^staragent_session=; .*Max-Age=0/);
    expect(f.hub.stderr()).not.toContain(f.hub.token);
  });
});
