import { hostname } from "node:os";
import { create } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import {
  Connectivity,
  type GetNodeRequest,
  NodeSchema,
  type NodeService,
} from "../../gen/staragent/v1/node_service_pb.js";
import { STARAGENT_VERSION } from "../common/version.js";

/**
 * The one NodeService call a Node answers: `GetNode` for itself. It is what the Hub's health check
 * calls (authenticated, so a refused node token shows; by name, so a Node registered under another
 * name shows) and how the Hub learns the Node's version and host name. The rest of NodeService is
 * the Hub's (UNIMPLEMENTED here).
 */
export function createNodeInfoService(nodeName: string): Partial<ServiceImpl<typeof NodeService>> {
  return {
    getNode(req: GetNodeRequest) {
      const name = `nodes/${nodeName}`;
      if (req.name !== name) {
        throw new ConnectError(
          `${JSON.stringify(req.name.slice(0, 80))} is not served here (this is node ${nodeName})`,
          Code.NotFound,
        );
      }
      return {
        node: create(NodeSchema, {
          name,
          displayName: nodeName,
          connectivity: Connectivity.ONLINE,
          lastSeenTime: timestampNow(),
          version: STARAGENT_VERSION,
          hostname: hostname(),
          local: false,
        }),
      };
    },
  };
}
