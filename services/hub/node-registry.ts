import { hostname } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Client, Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Connectivity, type Node, NodeSchema } from "../../gen/staragent/v1/node_service_pb.js";
import { SessionService } from "../../gen/staragent/v1/session_service_pb.js";
import { TerminalStream } from "../../gen/staragent/v1/terminal_stream_pb.js";
import { bearerInterceptor } from "../common/bearer.js";
import type { Logger } from "../common/log.js";
import { STARAGENT_VERSION } from "../common/version.js";
import { JsonFile } from "../node/index.js";

/** How long a call to a remote Node may take to connect before the Node counts as unreachable. */
const NODE_CONNECT_TIMEOUT_MS = 5_000;

/** One node the Hub can route calls to. */
export interface NodeEntry {
  readonly id: string;
  readonly local: boolean;
  readonly url: string;
  readonly displayName: string;
  readonly sessions: Client<typeof SessionService>;
  readonly terminal: Client<typeof TerminalStream>;
  connectivity: Connectivity;
  lastSeen: Date | undefined;
  lastError: string;
}

/** A remote node as stored in `.staragent/nodes.json` (mode 0600: it holds node tokens). */
export interface StoredNode {
  readonly id: string;
  readonly url: string;
  readonly token: string;
  readonly displayName: string;
}

/** What the registry is built from. */
export interface NodeRegistryOptions {
  /** The in-process transport to the Hub's own machine. */
  readonly localTransport: Transport;
  readonly home: string;
  readonly log: Logger;
  /** Nodes named on the command line (`--node NAME=URL`), reached with `commandLineToken`. */
  readonly commandLineNodes: ReadonlyArray<{ id: string; url: string }>;
  readonly commandLineToken: string | undefined;
}

/**
 * The nodes a Hub knows: its own machine (`local`, in-process) and remote Nodes (gRPC over HTTP/2 with
 * their node token). Remote nodes added through the API persist in `nodes.json`.
 */
export class NodeRegistry {
  private readonly nodes = new Map<string, NodeEntry>();
  private readonly store: JsonFile<StoredNode[]>;
  private readonly listeners = new Set<() => void>();

  constructor(private readonly options: NodeRegistryOptions) {
    this.store = new JsonFile(join(options.home, "nodes.json"), validateStoredNodes, () => [], options.log);
    this.nodes.set("local", {
      id: "local",
      local: true,
      url: "",
      displayName: hostname(),
      sessions: createClient(SessionService, options.localTransport),
      terminal: createClient(TerminalStream, options.localTransport),
      connectivity: Connectivity.ONLINE,
      lastSeen: new Date(),
      lastError: "",
    });
  }

  /** Loads the stored nodes and the command-line ones. */
  async load(): Promise<void> {
    for (const node of this.options.commandLineNodes) {
      if (!this.options.commandLineToken) {
        throw new Error(`--node ${node.id}=${node.url} needs STARAGENT_NODE_TOKEN (the token the Node expects)`);
      }
      this.addEntry({ id: node.id, url: node.url, token: this.options.commandLineToken, displayName: node.id });
    }
    for (const node of await this.store.read()) {
      if (!this.nodes.has(node.id)) this.addEntry(node);
    }
  }

  /** Every node, the local one first, then by id. */
  list(): NodeEntry[] {
    return [...this.nodes.values()].sort((a, b) => (a.local ? -1 : b.local ? 1 : a.id.localeCompare(b.id)));
  }

  /** One node; NOT_FOUND when unknown. */
  get(id: string): NodeEntry {
    const node = this.nodes.get(id);
    if (!node) throw new ConnectError(`node nodes/${id} not found`, Code.NotFound);
    return node;
  }

  /** Registers and stores a remote node. */
  async add(node: StoredNode): Promise<NodeEntry> {
    if (this.nodes.has(node.id)) throw new ConnectError(`node_id: node ${node.id} already exists`, Code.AlreadyExists);
    await this.store.update((nodes) => [...nodes.filter((n) => n.id !== node.id), node]);
    const entry = this.addEntry(node);
    this.changed();
    return entry;
  }

  /** Forgets a remote node (its sessions keep running on it). */
  async remove(id: string): Promise<void> {
    const node = this.get(id);
    if (node.local) throw new ConnectError("the Hub's own machine cannot be removed", Code.FailedPrecondition);
    await this.store.update((nodes) => nodes.filter((n) => n.id !== id));
    this.nodes.delete(id);
    this.changed();
  }

  /** Records the outcome of a call to a node, for its connectivity. */
  markResult(id: string, error?: unknown): void {
    const node = this.nodes.get(id);
    if (!node || node.local) return;
    const before = node.connectivity;
    if (error === undefined) {
      node.connectivity = Connectivity.ONLINE;
      node.lastSeen = new Date();
      node.lastError = "";
    } else if (isUnreachable(error)) {
      node.connectivity = Connectivity.OFFLINE;
      node.lastError = error instanceof Error ? error.message : String(error);
    }
    if (node.connectivity !== before) this.changed();
  }

  /** Calls `listener` whenever a node is added, removed or changes connectivity. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The Node resource for an entry. */
  toNode(entry: NodeEntry): Node {
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
      version: entry.local ? STARAGENT_VERSION : "",
      hostname: entry.local ? hostname() : "",
      local: entry.local,
      lastError: entry.lastError,
    });
  }

  private addEntry(node: StoredNode): NodeEntry {
    const transport = createGrpcTransport({
      baseUrl: node.url,
      interceptors: [bearerInterceptor(node.token)],
      defaultTimeoutMs: undefined,
    });
    const entry: NodeEntry = {
      id: node.id,
      local: false,
      url: node.url,
      displayName: node.displayName || node.id,
      sessions: createClient(SessionService, transport),
      terminal: createClient(TerminalStream, transport),
      connectivity: Connectivity.CONNECTING,
      lastSeen: undefined,
      lastError: "",
    };
    this.nodes.set(node.id, entry);
    return entry;
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }
}

/** True for errors that mean "the node could not be reached", as opposed to the node's own answers. */
export function isUnreachable(error: unknown): boolean {
  if (!(error instanceof ConnectError)) return true;
  return error.code === Code.Unavailable || error.code === Code.DeadlineExceeded || error.code === Code.Unknown;
}

/**
 * The error to give the caller for a failed call to a node: the node's own answer with its code,
 * message and details (but not its transport headers, which are not ours to send), or UNAVAILABLE
 * when the node could not be reached.
 */
export function relayError(node: { id: string; local: boolean }, error: unknown): ConnectError {
  if (error instanceof ConnectError && (node.local || !isUnreachable(error))) {
    const relayed = new ConnectError(error.rawMessage, error.code);
    relayed.details.push(...error.details);
    return relayed;
  }
  const why = error instanceof ConnectError ? error.rawMessage : error instanceof Error ? error.message : String(error);
  return new ConnectError(`node ${node.id} is unreachable: ${why}`, Code.Unavailable);
}

/** Timeout for calls that must answer quickly even when a node is gone. */
export const NODE_CALL_TIMEOUT_MS = NODE_CONNECT_TIMEOUT_MS;

function validateStoredNodes(value: unknown): StoredNode[] {
  if (!Array.isArray(value)) throw new Error("nodes.json must be a JSON array");
  return value.map((v, i) => {
    const n = v as Partial<StoredNode>;
    if (typeof n?.id !== "string" || typeof n.url !== "string" || typeof n.token !== "string") {
      throw new Error(`nodes.json: entry ${i} needs id, url and token (strings)`);
    }
    return {
      id: n.id,
      url: n.url,
      token: n.token,
      displayName: typeof n.displayName === "string" ? n.displayName : n.id,
    };
  });
}
