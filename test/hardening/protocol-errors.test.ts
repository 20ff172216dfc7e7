import http from "node:http";
import http2 from "node:http2";
import { gzipSync } from "node:zlib";
import { create, toBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GetSessionRequestSchema } from "../../gen/staragent/v1/session_service_pb.js";
import { NODE_TOKEN, type NodeFixture, startNodeFixture } from "./node-fixture.js";

/** A field 1 (length-delimited) that promises 80 bytes and carries one: not a message. */
const TRUNCATED = Buffer.from([0x0a, 0x50, 0x41]);
/** A field with wire type 7, which does not exist. */
const BAD_WIRE_TYPE = Buffer.from([0x0f, 0x01]);
/** Field 1 as a string holding bytes that are not UTF-8. */
const BAD_UTF8 = Buffer.from([0x0a, 0x02, 0xff, 0xfe]);
/** A valid GetSessionRequest for a session that does not exist. */
const VALID = Buffer.from(
  toBinary(GetSessionRequestSchema, create(GetSessionRequestSchema, { name: "nodes/n1/sessions/ghost" })),
);

function envelope(message: Buffer, flags = 0): Buffer {
  const header = Buffer.alloc(5);
  header[0] = flags;
  header.writeUInt32BE(message.length, 1);
  return Buffer.concat([header, message]);
}

/** One gRPC call over a raw HTTP/2 stream, the body written in `chunks`; resolves with its status. */
function grpcCall(
  url: string,
  path: string,
  chunks: Buffer[],
  headers: Record<string, string> = {},
): Promise<{ status: string; message: string }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(url);
    session.on("error", reject);
    const stream = session.request({
      ":method": "POST",
      ":path": path,
      "content-type": "application/grpc",
      te: "trailers",
      authorization: `Bearer ${NODE_TOKEN}`,
      ...headers,
    });
    let status = "";
    let message = "";
    const take = (h: http2.IncomingHttpHeaders) => {
      if (h["grpc-status"] !== undefined) {
        status = String(h["grpc-status"]);
        message = decodeURIComponent(String(h["grpc-message"] ?? ""));
      }
    };
    stream.on("response", take);
    stream.on("trailers", take);
    stream.on("close", () => {
      session.close();
      resolve({ status, message });
    });
    stream.on("error", reject);
    stream.resume();
    void (async () => {
      for (const chunk of chunks) {
        stream.write(chunk);
        await new Promise((r) => setImmediate(r));
      }
      stream.end();
    })();
  });
}

/** One HTTP/1.1 POST; resolves with the status and body. */
function post(url: string, headers: Record<string, string>, body: Buffer): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: "POST", headers: { authorization: `Bearer ${NODE_TOKEN}`, ...headers } });
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("latin1") }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("malformed protobuf binary requests are INVALID_ARGUMENT on every protocol", () => {
  let f: NodeFixture;
  beforeAll(async () => {
    f = await startNodeFixture();
  });
  afterAll(async () => {
    await f?.close();
  });

  const getSession = "/staragent.v1.SessionService/GetSession";

  it.each([
    ["a truncated field", TRUNCATED],
    ["an unknown wire type", BAD_WIRE_TYPE],
    ["a string that is not UTF-8", BAD_UTF8],
  ])("gRPC unary: %s", async (_what, message) => {
    const res = await grpcCall(f.server.url, getSession, [envelope(message)]);
    expect(res.status).toBe("3");
    expect(res.message).toMatch(/^request: not a valid staragent\.v1\.GetSessionRequest message/);
  });

  it("gRPC: split across many small writes, a bad message is still refused and a good one still served", async () => {
    const bytes = (b: Buffer) => [...b].map((x) => Buffer.from([x]));
    expect((await grpcCall(f.server.url, getSession, bytes(envelope(TRUNCATED)))).status).toBe("3");
    const good = await grpcCall(f.server.url, getSession, bytes(envelope(VALID)));
    expect(good).toMatchObject({ status: "5", message: "session nodes/n1/sessions/ghost not found" });
  });

  it("gRPC: a gzip-compressed bad message", async () => {
    const res = await grpcCall(f.server.url, getSession, [envelope(gzipSync(TRUNCATED), 1)], {
      "grpc-encoding": "gzip",
    });
    expect(res.status).toBe("3");
  });

  it("gRPC server streaming (WatchSessions) and bidi streaming (reflection)", async () => {
    expect(
      (await grpcCall(f.server.url, "/staragent.v1.SessionService/WatchSessions", [envelope(TRUNCATED)])).status,
    ).toBe("3");
    const reflection = await grpcCall(f.server.url, "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", [
      envelope(BAD_WIRE_TYPE),
    ]);
    expect(reflection.status).toBe("3");
  });

  it("Connect unary binary, plain and gzip-compressed", async () => {
    for (const [headers, body] of [
      [{ "content-type": "application/proto" }, TRUNCATED],
      [{ "content-type": "application/proto", "content-encoding": "gzip" }, gzipSync(TRUNCATED)],
    ] as const) {
      const res = await post(`${f.server.url}${getSession}`, headers, body);
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body)).toMatchObject({
        code: "invalid_argument",
        message: expect.stringMatching(/^request: not a valid staragent\.v1\.GetSessionRequest message/),
      });
    }
    const good = await post(`${f.server.url}${getSession}`, { "content-type": "application/proto" }, VALID);
    expect(good.status).toBe(404);
  });

  it("gRPC-Web", async () => {
    const res = await post(
      `${f.server.url}${getSession}`,
      { "content-type": "application/grpc-web+proto", "x-grpc-web": "1" },
      envelope(TRUNCATED),
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatch(/grpc-status: ?3/);
  });
});
