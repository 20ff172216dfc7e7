import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import {
  type AddNodeRequest,
  type GetNodeRequest,
  type ListNodesRequest,
  type Node,
  type NodeService,
  type RemoveNodeRequest,
  type UpdateNodeRequest,
  WatchNodesResponseSchema,
} from "../../gen/staragent/v1/node_service_pb.js";
import { AsyncQueue } from "../common/async-queue.js";
import { Disposables, onAbort } from "../common/disposables.js";
import { paginate } from "../common/pagination.js";
import { LOCAL_NODE_ID, NODE_ID_PATTERN } from "../common/resource-names.js";
import { NODE_TOKEN_PATTERN, type NodeRegistry } from "./node-registry.js";
import { checkNodeUrl } from "./node-url.js";

/** Longest node token accepted. */
const MAX_TOKEN_LENGTH = 1024;
/** Longest display name accepted. */
const MAX_DISPLAY_NAME_LENGTH = 128;

/**
 * The Hub's NodeService over its node registry. Connectivity comes from each Node's health check
 * (`NodeRegistry`); WatchNodes sends the whole list again whenever a node is added, removed, or
 * changes connectivity or error.
 */
export class HubNodeService implements ServiceImpl<typeof NodeService> {
  constructor(private readonly registry: NodeRegistry) {}

  listNodes(req: ListNodesRequest) {
    const nodes = this.registry.list().map((n) => this.registry.toNode(n));
    // The Hub's own machine first, then the others by name.
    const order = (n: Node) => `${n.local ? 0 : 1}${n.name}`;
    const { page, nextPageToken } = paginate(nodes, order, req.pageSize, req.pageToken, "nodes");
    return { nodes: page, nextPageToken };
  }

  getNode(req: GetNodeRequest) {
    return { node: this.registry.toNode(this.registry.get(nodeId(req.name))) };
  }

  async addNode(req: AddNodeRequest) {
    if (!NODE_ID_PATTERN.test(req.nodeId) || req.nodeId === LOCAL_NODE_ID) {
      throw new ConnectError(
        `node_id: ${JSON.stringify(req.nodeId.slice(0, 80))} is not valid (lowercase letters, digits and '-', starting with a letter, at most 63; 'local' is reserved)`,
        Code.InvalidArgument,
      );
    }
    const url = checkNodeUrl(req.url);
    checkToken(req.token);
    checkDisplayName(req.displayName);
    if (this.registry.list().some((n) => n.id === req.nodeId)) {
      throw new ConnectError(`node_id: node ${req.nodeId} already exists`, Code.AlreadyExists);
    }
    const node = { id: req.nodeId, url: url.origin, token: req.token, displayName: req.displayName || req.nodeId };
    // A URL leading back to this Hub, or to another Hub, is refused here; one that cannot be reached
    // or refuses the token too, unless forced (it is then shown OFFLINE with the reason until it answers).
    const first = await this.registry.vet(node, req.force, "add");
    const entry = await this.registry.add(node, first);
    return { node: this.registry.toNode(entry) };
  }

  async updateNode(req: UpdateNodeRequest) {
    const current = this.registry.stored(nodeId(req.name));
    const node = {
      id: current.id,
      url: req.url === "" ? current.url : checkNodeUrl(req.url).origin,
      token: req.token === "" ? current.token : checkToken(req.token),
      displayName: req.displayName === "" ? current.displayName : checkDisplayName(req.displayName),
    };
    const first = await this.registry.vet(node, req.force, "update");
    const entry = await this.registry.update(node, first);
    return { node: this.registry.toNode(entry) };
  }

  async removeNode(req: RemoveNodeRequest) {
    await this.registry.remove(nodeId(req.name));
    return {};
  }

  async *watchNodes(_req: unknown, ctx: HandlerContext) {
    const queue = new AsyncQueue<true>();
    const cleanup = new Disposables();
    cleanup.add(this.registry.onChange(() => queue.push(true)));
    cleanup.add(onAbort(ctx.signal, () => queue.close()));
    try {
      yield create(WatchNodesResponseSchema, { nodes: this.registry.list().map((n) => this.registry.toNode(n)) });
      for await (const _ of queue) {
        queue.drain();
        yield create(WatchNodesResponseSchema, { nodes: this.registry.list().map((n) => this.registry.toNode(n)) });
      }
    } finally {
      cleanup.dispose();
    }
  }
}

/** A node token the Hub can send, or INVALID_ARGUMENT (never echoing it). */
function checkToken(token: string): string {
  if (token === "" || token.length > MAX_TOKEN_LENGTH) {
    throw new ConnectError("token: the Node's node token is required (at most 1024 characters)", Code.InvalidArgument);
  }
  if (!NODE_TOKEN_PATTERN.test(token)) {
    // Never echoed: it is a secret, and its bad characters could forge lines or headers.
    throw new ConnectError(
      "token: a node token is printable ASCII without spaces or line breaks (as in $STARAGENT_HOME/node_token)",
      Code.InvalidArgument,
    );
  }
  return token;
}

/** A display name of acceptable length, or INVALID_ARGUMENT. */
function checkDisplayName(displayName: string): string {
  if (displayName.length > MAX_DISPLAY_NAME_LENGTH) {
    throw new ConnectError(`display_name: at most ${MAX_DISPLAY_NAME_LENGTH} characters`, Code.InvalidArgument);
  }
  return displayName;
}

function nodeId(name: string): string {
  const match = /^nodes\/([^/]+)$/.exec(name);
  if (!match?.[1])
    throw new ConnectError(
      `name: ${JSON.stringify(name.slice(0, 80))} is not of the form nodes/{node}`,
      Code.InvalidArgument,
    );
  return match[1];
}
