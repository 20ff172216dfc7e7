import { create, type DescFile, type DescService, type FileRegistry, toBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import {
  ServerReflection,
  type ServerReflectionRequest,
  type ServerReflectionResponse,
  ServerReflectionResponseSchema,
} from "../../gen/grpc/reflection/v1/reflection_pb.js";

/** gRPC status code NOT_FOUND, as the reflection protocol reports it inside a response. */
const GRPC_NOT_FOUND = 5;
/** gRPC status code UNIMPLEMENTED, for requests this server does not support (extensions). */
const GRPC_UNIMPLEMENTED = 12;

/**
 * Registers `grpc.reflection.v1.ServerReflection` for `services`, so that `buf curl` and other gRPC
 * tools can call the server without a copy of the schema. Files are answered with their transitive
 * dependencies, as the protocol asks.
 */
export function registerReflection(router: ConnectRouter, registry: FileRegistry, services: DescService[]): void {
  const serviceNames = [...services.map((s) => s.typeName), ServerReflection.typeName];
  router.service(ServerReflection, {
    async *serverReflectionInfo(requests) {
      for await (const request of requests) {
        yield answer(request, registry, serviceNames);
      }
    },
  });
}

function answer(
  request: ServerReflectionRequest,
  registry: FileRegistry,
  services: string[],
): ServerReflectionResponse {
  const base = { validHost: request.host, originalRequest: request };
  const files = (file: DescFile | undefined, what: string): ServerReflectionResponse =>
    file
      ? create(ServerReflectionResponseSchema, {
          ...base,
          messageResponse: {
            case: "fileDescriptorResponse",
            value: {
              fileDescriptorProto: withDependencies(file).map((f) => toBinary(FileDescriptorProtoSchema, f.proto)),
            },
          },
        })
      : error(base, GRPC_NOT_FOUND, `${what} not found`);

  const req = request.messageRequest;
  switch (req.case) {
    case "listServices":
      return create(ServerReflectionResponseSchema, {
        ...base,
        messageResponse: { case: "listServicesResponse", value: { service: services.map((name) => ({ name })) } },
      });
    case "fileByFilename":
      return files(registry.getFile(req.value), `file ${req.value}`);
    case "fileContainingSymbol": {
      const symbol = req.value.replace(/^\./, "");
      return files(fileOfSymbol(registry, symbol), `symbol ${symbol}`);
    }
    case "fileContainingExtension":
    case "allExtensionNumbersOfType":
      return error(base, GRPC_UNIMPLEMENTED, "extensions are not used by this server");
    default:
      return error(base, GRPC_UNIMPLEMENTED, "unknown reflection request");
  }
}

function fileOfSymbol(registry: FileRegistry, symbol: string): DescFile | undefined {
  const direct = registry.get(symbol);
  if (direct) return direct.file;
  // A method name: `package.Service.Method`.
  const dot = symbol.lastIndexOf(".");
  const service = dot > 0 ? registry.getService(symbol.slice(0, dot)) : undefined;
  return service?.methods.some((m) => m.name === symbol.slice(dot + 1)) ? service.file : undefined;
}

function withDependencies(file: DescFile): DescFile[] {
  const seen = new Map<string, DescFile>();
  const visit = (f: DescFile) => {
    if (seen.has(f.name)) return;
    seen.set(f.name, f);
    for (const dep of f.dependencies) visit(dep);
  };
  visit(file);
  return [...seen.values()];
}

function error(
  base: Pick<ServerReflectionResponse, "validHost" | "originalRequest">,
  errorCode: number,
  errorMessage: string,
): ServerReflectionResponse {
  return create(ServerReflectionResponseSchema, {
    ...base,
    messageResponse: { case: "errorResponse", value: { errorCode, errorMessage } },
  });
}
