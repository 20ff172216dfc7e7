import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type {
  GetChangesRequest,
  GetFileDiffRequest,
  ListFilesRequest,
  ReadFileRequest,
  WorkspaceService,
} from "../../gen/staragent/v1/workspace_service_pb.js";
import { parseSessionName } from "../common/resource-names.js";
import { forCaller } from "./node-client.js";
import type { NodeEntry, NodeRegistry } from "./node-registry.js";

/**
 * The Hub's WorkspaceService: each call goes to the node named in the session's resource name (the
 * Hub's own machine in-process, a remote Node over gRPC) through that Node's client, which passes on
 * the caller's deadline and relays errors (node-client.ts). Paths are confined by the owning machine, which alone can
 * resolve them; the Hub passes requests and answers through unchanged.
 */
export class HubWorkspaceService implements ServiceImpl<typeof WorkspaceService> {
  constructor(private readonly registry: NodeRegistry) {}

  getChanges(req: GetChangesRequest, ctx: HandlerContext) {
    return this.nodeOf(req.name).workspace.getChanges(req, forCaller(ctx));
  }

  getFileDiff(req: GetFileDiffRequest, ctx: HandlerContext) {
    return this.nodeOf(req.name).workspace.getFileDiff(req, forCaller(ctx));
  }

  listFiles(req: ListFilesRequest, ctx: HandlerContext) {
    return this.nodeOf(req.name).workspace.listFiles(req, forCaller(ctx));
  }

  readFile(req: ReadFileRequest, ctx: HandlerContext) {
    return this.nodeOf(req.name).workspace.readFile(req, forCaller(ctx));
  }

  private nodeOf(name: string): NodeEntry {
    return this.registry.get(parseSessionName(name).node);
  }
}
