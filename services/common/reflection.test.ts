import { fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { ServerReflection, type ServerReflectionRequest } from "../../gen/grpc/reflection/v1/reflection_pb.js";
import { SessionService } from "../../gen/staragent/v1/session_service_pb.js";
import { staragentRegistry } from "./descriptors.js";
import { registerReflection } from "./reflection.js";

type Request = Partial<Pick<ServerReflectionRequest, "messageRequest">>;

async function ask(requests: Request[]) {
  const transport = createRouterTransport((router) =>
    registerReflection(router, staragentRegistry(), [SessionService]),
  );
  const client = createClient(ServerReflection, transport);
  const out = [];
  async function* input() {
    for (const r of requests) yield r;
  }
  for await (const res of client.serverReflectionInfo(input())) out.push(res.messageResponse);
  return out;
}

function fileNames(response: Awaited<ReturnType<typeof ask>>[number]): string[] {
  if (response.case !== "fileDescriptorResponse") throw new Error(`expected files, got ${response.case}`);
  return response.value.fileDescriptorProto.map((b) => fromBinary(FileDescriptorProtoSchema, b).name);
}

describe("registerReflection", () => {
  it("lists the registered services and reflection itself", async () => {
    const [res] = await ask([{ messageRequest: { case: "listServices", value: "" } }]);
    expect(res?.case).toBe("listServicesResponse");
    expect(res?.case === "listServicesResponse" && res.value.service.map((s) => s.name)).toEqual([
      "staragent.v1.SessionService",
      "grpc.reflection.v1.ServerReflection",
    ]);
  });

  it("answers a service, a method or a message with its file and the file's dependencies", async () => {
    const responses = await ask([
      { messageRequest: { case: "fileContainingSymbol", value: "staragent.v1.SessionService" } },
      { messageRequest: { case: "fileContainingSymbol", value: "staragent.v1.SessionService.ListSessions" } },
      { messageRequest: { case: "fileContainingSymbol", value: "grpc.reflection.v1.ServerReflection" } },
      { messageRequest: { case: "fileByFilename", value: "staragent/v1/session.proto" } },
    ]);
    const [service, method, reflection, byName] = responses.map((r) => (r ? fileNames(r) : []));
    expect(service?.[0]).toBe("staragent/v1/session_service.proto");
    expect(service).toEqual(expect.arrayContaining(["staragent/v1/session.proto", "google/protobuf/timestamp.proto"]));
    expect(method).toEqual(service);
    expect(reflection).toEqual(["grpc/reflection/v1/reflection.proto"]);
    expect(byName?.[0]).toBe("staragent/v1/session.proto");
  });

  it("reports unknown symbols and extensions as errors inside the stream", async () => {
    const [unknown, extension] = await ask([
      { messageRequest: { case: "fileContainingSymbol", value: "staragent.v1.Nope" } },
      { messageRequest: { case: "allExtensionNumbersOfType", value: "staragent.v1.Session" } },
    ]);
    expect(unknown?.case === "errorResponse" && unknown.value.errorCode).toBe(5);
    expect(extension?.case === "errorResponse" && extension.value.errorCode).toBe(12);
  });
});
