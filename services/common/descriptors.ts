import { create, createFileRegistry, type DescFile, type FileRegistry } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { file_grpc_health_v1_health } from "../../gen/grpc/health/v1/health_pb.js";
import { file_grpc_reflection_v1_reflection } from "../../gen/grpc/reflection/v1/reflection_pb.js";
import { file_staragent_v1_login_service } from "../../gen/staragent/v1/login_service_pb.js";
import { file_staragent_v1_node_service } from "../../gen/staragent/v1/node_service_pb.js";
import { file_staragent_v1_notification_service } from "../../gen/staragent/v1/notification_service_pb.js";
import { file_staragent_v1_session_service } from "../../gen/staragent/v1/session_service_pb.js";
import { file_staragent_v1_terminal_stream } from "../../gen/staragent/v1/terminal_stream_pb.js";
import { file_staragent_v1_workspace_service } from "../../gen/staragent/v1/workspace_service_pb.js";

/**
 * Every file descriptor a StarAgent server serves (its own services, reflection and health) with
 * their dependencies, for gRPC reflection: tools such as `buf curl --list-methods` resolve every
 * listed service, so each one must be describable.
 */
export function staragentRegistry(): FileRegistry {
  const ordered = new Map<string, DescFile>();
  const visit = (file: DescFile) => {
    if (ordered.has(file.name)) return;
    for (const dep of file.dependencies) visit(dep);
    ordered.set(file.name, file);
  };
  for (const file of [
    file_staragent_v1_session_service,
    file_staragent_v1_terminal_stream,
    file_staragent_v1_node_service,
    file_staragent_v1_workspace_service,
    file_staragent_v1_login_service,
    file_staragent_v1_notification_service,
    file_grpc_reflection_v1_reflection,
    file_grpc_health_v1_health,
  ]) {
    visit(file);
  }
  return createFileRegistry(create(FileDescriptorSetSchema, { file: [...ordered.values()].map((f) => f.proto) }));
}
