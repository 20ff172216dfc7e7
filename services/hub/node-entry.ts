import { hostname } from "node:os";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Client, createClient, type Transport } from "@connectrpc/connect";
import { Connectivity, type Node, NodeSchema } from "../../gen/staragent/v1/node_service_pb.js";
import { SessionService } from "../../gen/staragent/v1/session_service_pb.js";
import { TerminalStream } from "../../gen/staragent/v1/terminal_stream_pb.js";
import { WorkspaceService } from "../../gen/staragent/v1/workspace_service_pb.js";
import { LOCAL_NODE_ID } from "../common/resource-names.js";
import { STARAGENT_VERSION } from "../common/version.js";
import type { NodeProblem } from "./node-errors.js";

/** One node the Hub can route calls to. */
export interface NodeEntry {
  readonly id: string;
  readonly local: boolean;
  readonly url: string;
  readonly displayName: string;
  readonly sessions: Client<typeof SessionService>;
  readonly terminal: Client<typeof TerminalStream>;
  readonly workspace: Client<typeof WorkspaceService>;
  /** From the health check only (`local` is always ONLINE). */
  connectivity: Connectivity;
  /** When the Hub last heard from the node: a health check, a call or a stream event. */
  lastSeen: Date | undefined;
  /** What is wrong, for people (never a token); empty while ONLINE. */
  lastError: string;
  /** Why the node cannot be used, while OFFLINE. */
  problem: NodeProblem | undefined;
  /** The Node's StarAgent version and host name, from its health check. */
  version: string;
  hostname: string;
}

/** The entry of the Hub's own machine, called in-process: always ONLINE. */
export function localNodeEntry(transport: Transport): NodeEntry {
  return {
    id: LOCAL_NODE_ID,
    local: true,
    url: "",
    displayName: hostname(),
    sessions: createClient(SessionService, transport),
    terminal: createClient(TerminalStream, transport),
    workspace: createClient(WorkspaceService, transport),
    connectivity: Connectivity.ONLINE,
    lastSeen: new Date(),
    lastError: "",
    problem: undefined,
    version: STARAGENT_VERSION,
    hostname: hostname(),
  };
}

/** The entry of a remote Node, CONNECTING until its first health check. */
export function remoteNodeEntry(
  node: { readonly id: string; readonly url: string; readonly displayName: string },
  transport: Transport,
): NodeEntry {
  return {
    id: node.id,
    local: false,
    url: node.url,
    displayName: node.displayName || node.id,
    sessions: createClient(SessionService, transport),
    terminal: createClient(TerminalStream, transport),
    workspace: createClient(WorkspaceService, transport),
    connectivity: Connectivity.CONNECTING,
    lastSeen: undefined,
    lastError: "",
    problem: undefined,
    version: "",
    hostname: "",
  };
}

/** The Node resource for an entry (the local one is seen now, always). */
export function toNode(entry: NodeEntry): Node {
  return create(NodeSchema, {
    name: `nodes/${entry.id}`,
    displayName: entry.displayName,
    url: entry.url,
    connectivity: entry.connectivity,
    lastSeenTime: entry.local
      ? timestampFromDate(new Date())
      : entry.lastSeen
        ? timestampFromDate(entry.lastSeen)
        : undefined,
    version: entry.version,
    hostname: entry.hostname,
    local: entry.local,
    lastError: entry.lastError,
  });
}
