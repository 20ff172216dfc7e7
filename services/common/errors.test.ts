import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { SessionService, WatchSessionsResponseSchema } from "../../gen/staragent/v1/session_service_pb.js";
import { createErrorInterceptor } from "./errors.js";
import { createLogger } from "./log.js";

/** A Node.js stream error as a reset HTTP/2 stream raises it. */
function nodeError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/** A server whose watch sends one event and then fails with `failure`; returns its log lines. */
async function logsOfStreamFailing(failure: unknown): Promise<{ lines: string[]; code: Code | undefined }> {
  const lines: string[] = [];
  const log = createLogger("test", "debug", (line) => lines.push(line));
  const transport = createRouterTransport(
    (router) =>
      router.service(SessionService, {
        async *watchSessions() {
          yield create(WatchSessionsResponseSchema, {});
          throw failure;
        },
      }),
    { router: { interceptors: [createErrorInterceptor(log)] } },
  );
  let code: Code | undefined;
  try {
    for await (const _ of createClient(SessionService, transport).watchSessions({})) {
      // Read until it fails.
    }
  } catch (err) {
    code = ConnectError.from(err).code;
  }
  return { lines, code };
}

describe("the error interceptor", () => {
  it("counts a caller that went away mid-stream as cancelled, logged at debug level without a stack", async () => {
    for (const failure of [
      nodeError("ERR_HTTP2_INVALID_STREAM", "The stream has been destroyed"),
      nodeError("ERR_STREAM_PREMATURE_CLOSE", "Premature close"),
      Object.assign(new Error("wrapped"), { cause: nodeError("ECONNRESET", "read ECONNRESET") }),
    ]) {
      const { lines, code } = await logsOfStreamFailing(failure);
      expect(code).toBe(Code.Canceled);
      expect(lines.filter((l) => / (ERROR|WARN) /.test(l))).toEqual([]);
      expect(lines.filter((l) => / DEBUG /.test(l) && l.includes("the caller went away"))).toHaveLength(1);
      expect(lines.join("\n")).not.toContain("    at ");
    }
  });

  it("still logs a real failure with its stack and answers INTERNAL", async () => {
    const { lines, code } = await logsOfStreamFailing(new TypeError("boom"));
    expect(code).toBe(Code.Internal);
    expect(lines.filter((l) => / ERROR /.test(l))).toHaveLength(1);
    expect(lines.join("\n")).toContain("TypeError: boom");
  });
});
