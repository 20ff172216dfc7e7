import {
  type Client,
  Code,
  ConnectError,
  createClient,
  type HandlerContext,
  type Transport,
} from "@connectrpc/connect";
import { Connectivity, type Node, NodeService } from "../../gen/staragent/v1/node_service_pb.js";
import { Disposables, onAbort } from "../common/disposables.js";
import type { JsonFile } from "../common/json-file.js";
import type { Logger } from "../common/log.js";
import { LOCAL_NODE_ID } from "../common/resource-names.js";
import { nodeClientTransport } from "./node-client.js";
import { http2Connector, type NodeConnection, type NodeConnector } from "./node-connection.js";
import { localNodeEntry, type NodeEntry, remoteNodeEntry, toNode } from "./node-entry.js";
import { describeProblem, relayNodeError, scrub } from "./node-errors.js";
import { checkNode, HealthLoop, type HealthOutcome } from "./node-health.js";
import { openNodeStore, type StoredNode } from "./node-store.js";
import { type NodeChange, vetNode } from "./node-vetting.js";

export type { NodeEntry } from "./node-entry.js";
export type { StoredNode } from "./node-store.js";

/**
 * How long a list across nodes waits for one remote Node: a Node that accepts connections but never
 * answers (wedged, or not yet found out by its health check) is then listed as unreachable.
 */
export const NODE_CALL_TIMEOUT_MS = 5_000;

/**
 * A bearer token as the Hub sends it: printable ASCII without spaces (what `Bearer <token>` may
 * carry). Anything else (CR, LF, spaces, non-ASCII) could never authenticate and could break headers.
 */
export const NODE_TOKEN_PATTERN = /^[\x21-\x7e]+$/;

/** What the registry is built from. */
export interface NodeRegistryOptions {
  /** The in-process transport to the Hub's own machine. */
  readonly localTransport: Transport;
  readonly home: string;
  readonly log: Logger;
  /** Nodes named on the command line (`--node NAME=URL`), reached with `commandLineToken`. */
  readonly commandLineNodes: ReadonlyArray<{ id: string; url: string }>;
  readonly commandLineToken: string | undefined;
  /** This Hub's instance id (`staragent-via`), so calls that would come back to it are refused. */
  readonly instanceId: string;
  /**
   * Certificates (PEM) to trust for `https://` Node URLs besides the public roots (`--node-ca`): a
   * Node's self-signed certificate, or the private CA that signed it.
   */
  readonly nodeCa?: string;
  /** How remote Nodes are reached (default: gRPC over HTTP/2, `http2Connector`); tests pass in-memory Nodes. */
  readonly connect?: NodeConnector;
  /**
   * Holds the health checks back until startHealthChecks(): the Hub's, so that its first checks find
   * its own port listening (a Node URL that leads back to the Hub is then told as such, not as closed).
   */
  readonly deferHealthChecks?: boolean;
}

/** A remote node's private parts: its token (to scrub from messages) and its health check. */
interface RemoteLink {
  readonly token: string;
  readonly nodes: Client<typeof NodeService>;
  readonly health: HealthLoop | undefined;
  /** The node's connection, closed when the node is removed or the Hub stops. */
  readonly connection: NodeConnection;
}

/**
 * The nodes a Hub knows: its own machine (`local`, in-process) and remote Nodes (gRPC over HTTP/2 with
 * their node token). Remote nodes added through the API persist in `nodes.json`.
 *
 * Connectivity is live: each remote Node has a health check running from the moment it is known
 * (`node-health.ts`), whether or not anyone lists or watches, and only that check changes its
 * connectivity: CONNECTING until its first answer, then ONLINE or OFFLINE. Calls and streams that see
 * a Node fail only ask for an early check, so a caller's own deadline or cancellation never marks a
 * Node OFFLINE.
 */
export class NodeRegistry {
  private readonly nodes = new Map<string, NodeEntry>();
  private readonly links = new Map<string, RemoteLink>();
  private readonly store: JsonFile<StoredNode[]>;
  private readonly connect: NodeConnector;
  private readonly listeners = new Set<() => void>();
  private closed = false;
  private checking = false;

  constructor(private readonly options: NodeRegistryOptions) {
    this.store = openNodeStore(options.home, options.log);
    this.connect = options.connect ?? http2Connector(options.nodeCa);
    const local: NodeEntry = localNodeEntry(this.clientTransport(options.localTransport, () => local));
    this.nodes.set(LOCAL_NODE_ID, local);
  }

  /** Loads the stored nodes and the command-line ones, and starts checking them (see deferHealthChecks). */
  async load(): Promise<void> {
    for (const node of this.options.commandLineNodes) {
      const token = this.options.commandLineToken;
      if (!token) {
        throw new Error(`--node ${node.id}=${node.url} needs STARAGENT_NODE_TOKEN (the token the Node expects)`);
      }
      if (!NODE_TOKEN_PATTERN.test(token)) {
        throw new Error("STARAGENT_NODE_TOKEN has characters a bearer token cannot have (spaces, line breaks...)");
      }
      this.addEntry({ id: node.id, url: node.url, token, displayName: node.id });
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

  /**
   * Checks a Node before it is stored (`node-vetting.ts`): refused with one sentence when it cannot
   * be reached or refuses its token, unless `force`; a URL leading back to a Hub always.
   */
  vet(node: StoredNode, force: boolean, change: NodeChange): Promise<HealthOutcome | undefined> {
    return vetNode(node, { connect: this.connect, instanceId: this.options.instanceId, force, change });
  }

  /** True while `entry` is the registry's node of its id (false once removed). */
  isCurrent(entry: NodeEntry): boolean {
    return this.nodes.get(entry.id) === entry;
  }

  /** Registers and stores a remote node; starts its health check (from `first`, when vetted). */
  async add(node: StoredNode, first?: HealthOutcome): Promise<NodeEntry> {
    if (this.nodes.has(node.id)) throw new ConnectError(`node_id: node ${node.id} already exists`, Code.AlreadyExists);
    await this.store.update((nodes) => [...nodes.filter((n) => n.id !== node.id), node]);
    const entry = this.addEntry(node, first);
    this.changed();
    return entry;
  }

  /**
   * Replaces a stored remote node's URL, token or display name (its id stays): a fresh connection and
   * health check (from `first`, when vetted). Watches follow the new entry (`isCurrent`).
   */
  async update(node: StoredNode, first?: HealthOutcome): Promise<NodeEntry> {
    const old = this.get(node.id);
    if (old.local)
      throw new ConnectError("The Hub's own machine has no URL or token to change.", Code.FailedPrecondition);
    if (this.options.commandLineNodes.some((n) => n.id === node.id)) {
      throw new ConnectError(
        `${node.id} is given on the Hub's command line (--node): change it there and restart the Hub.`,
        Code.FailedPrecondition,
      );
    }
    await this.store.update((nodes) => nodes.map((n) => (n.id === node.id ? node : n)));
    const link = this.links.get(node.id);
    this.links.delete(node.id);
    await link?.health?.close();
    link?.connection.close();
    const entry = this.addEntry(node, first);
    this.changed();
    return entry;
  }

  /** The stored form of a remote node (with its token), for UpdateNode to change. */
  stored(id: string): StoredNode {
    const entry = this.get(id);
    const token = this.links.get(id)?.token;
    if (entry.local || token === undefined) {
      throw new ConnectError("The Hub's own machine has no URL or token to change.", Code.FailedPrecondition);
    }
    return { id, url: entry.url, token, displayName: entry.displayName };
  }

  /** Forgets a remote node (its sessions keep running on it). */
  async remove(id: string): Promise<void> {
    const node = this.get(id);
    if (node.local) throw new ConnectError("the Hub's own machine cannot be removed", Code.FailedPrecondition);
    await this.store.update((nodes) => nodes.filter((n) => n.id !== id));
    this.nodes.delete(id);
    const link = this.links.get(id);
    this.links.delete(id);
    await link?.health?.close();
    link?.connection.close();
    this.changed();
  }

  /** Starts the health checks held back by `deferHealthChecks` (the Hub calls it once it listens). */
  startHealthChecks(): void {
    if (this.checking || !this.options.deferHealthChecks) return;
    this.checking = true;
    if (!this.closed) for (const link of this.links.values()) link.health?.start();
  }

  /** Stops every health check and closes the connections to the Nodes. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.links.values()].map((link) => link.health?.close()));
    for (const link of this.links.values()) link.connection.close();
  }

  /** A call or stream event got an answer from `id`: it was seen now. */
  markSeen(id: string): void {
    const node = this.nodes.get(id);
    if (!node || node.local) return;
    node.lastSeen = new Date();
    if (node.connectivity !== Connectivity.ONLINE) this.links.get(id)?.health?.wake();
  }

  /** A call or stream to `id` failed in a way that may mean the Node is gone: check it soon. */
  suspect(id: string): void {
    this.links.get(id)?.health?.wake();
  }

  /**
   * Refuses a call to a node the Hub knows it cannot use, at once and with an error about the Hub's
   * side: FAILED_PRECONDITION when a person must fix something (token, name, URL), UNAVAILABLE while
   * it is unreachable (the health check keeps trying).
   */
  admit(node: NodeEntry): void {
    if (node.local || node.connectivity !== Connectivity.OFFLINE || !node.problem) return;
    if (node.problem === "unreachable") {
      this.suspect(node.id);
      throw new ConnectError(`node ${node.id} is unreachable: ${node.lastError}`, Code.Unavailable);
    }
    throw new ConnectError(`the Hub cannot use node ${node.id}: ${node.lastError}`, Code.FailedPrecondition);
  }

  /**
   * The error to give the caller for a failed call to `node` made for `ctx`:
   * - the caller's own end (its deadline passed, it went away) as such;
   * - the Node's answer about the request with its code, message and details (not its transport
   *   headers, which are not ours to send);
   * - the Node refusing the Hub (its token, a loop, not a Node) as FAILED_PRECONDITION naming the node
   *   and the fix, never as the caller's UNAUTHENTICATED or RESOURCE_EXHAUSTED;
   * - an unreachable Node as UNAVAILABLE naming it.
   * The Hub's own machine's errors pass unchanged.
   */
  relayError(node: NodeEntry, error: unknown, ctx: HandlerContext): ConnectError {
    const relayed = relayNodeError(node, error, ctx, this.links.get(node.id)?.token ?? "");
    if (relayed.suspect) this.suspect(node.id);
    return relayed.error;
  }

  /** The Node resource for an entry. */
  toNode(entry: NodeEntry): Node {
    return toNode(entry);
  }

  /** Calls `listener` whenever a node is added, removed or changes connectivity or error. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Resolves at the next change of the registry (any node), after `ms`, or when `signal` aborts,
   * whichever comes first: how streams wait to retry a node without missing its return.
   */
  nextChange(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const cleanup = new Disposables();
      const done = () => {
        cleanup.dispose();
        resolve();
      };
      const timer = setTimeout(done, ms);
      cleanup.add(() => clearTimeout(timer));
      cleanup.add(this.onChange(done));
      cleanup.add(onAbort(signal, done));
    });
  }

  private addEntry(node: StoredNode, first?: HealthOutcome): NodeEntry {
    const usable = NODE_TOKEN_PATTERN.test(node.token);
    // A token that cannot be sent never reaches a transport (whose errors would quote it).
    const connection = this.connect(usable ? node : { ...node, token: "unusable" });
    const transport = connection.transport;
    const entry: NodeEntry = remoteNodeEntry(
      node,
      this.clientTransport(transport, () => entry),
    );
    this.nodes.set(node.id, entry);
    const nodes = createClient(NodeService, transport);
    if (!usable) {
      this.links.set(node.id, { token: node.token, nodes, health: undefined, connection });
      this.apply(entry, { ok: false, problem: "bad-token", why: "" });
      return entry;
    }
    const target = { id: node.id, nodes, via: this.options.instanceId };
    const health = new HealthLoop(async (signal) => {
      const started = Date.now();
      const outcome = await checkNode(target, signal);
      // A check that ran out of time while the Node's streams kept delivering: the Node is slow (a
      // busy machine), not gone. It keeps its state; the next check decides.
      const slow = !outcome.ok && outcome.timedOut === true && (entry.lastSeen?.getTime() ?? 0) >= started;
      if (slow) return { ok: true, version: entry.version, hostname: entry.hostname };
      if (!signal.aborted && this.nodes.get(node.id) === entry) this.apply(entry, outcome);
      return outcome;
    });
    this.links.set(node.id, { token: node.token, nodes, health, connection });
    if (first) this.apply(entry, first);
    if (!this.closed && (this.checking || !this.options.deferHealthChecks)) health.start();
    return entry;
  }

  /**
   * The transport of a node's clients: every call through them is admitted, passes the caller's
   * deadline on, is relayed and counts as seen (`node-client.ts`). `entry` is the node's entry.
   */
  private clientTransport(transport: Transport, entry: () => NodeEntry): Transport {
    return nodeClientTransport(transport, {
      instanceId: this.options.instanceId,
      admit: () => this.admit(entry()),
      seen: () => this.markSeen(entry().id),
      relay: (error, ctx) => this.relayError(entry(), error, ctx),
    });
  }

  /** Applies a health check's outcome to `entry`; tells listeners when anything they show changed. */
  private apply(entry: NodeEntry, outcome: HealthOutcome): void {
    const before = `${entry.connectivity}|${entry.lastError}|${entry.version}|${entry.hostname}`;
    if (outcome.ok) {
      entry.connectivity = Connectivity.ONLINE;
      entry.lastSeen = new Date();
      entry.lastError = "";
      entry.problem = undefined;
      entry.version = outcome.version;
      entry.hostname = outcome.hostname;
    } else {
      const token = this.links.get(entry.id)?.token ?? "";
      entry.connectivity = Connectivity.OFFLINE;
      entry.problem = outcome.problem;
      entry.lastError = describeProblem(outcome.problem, entry, scrub(outcome.why, token));
    }
    if (`${entry.connectivity}|${entry.lastError}|${entry.version}|${entry.hostname}` === before) return;
    if (outcome.ok) this.options.log.info("node online", { node: entry.id });
    else this.options.log.warn("node offline", { node: entry.id, why: entry.lastError });
    this.changed();
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }
}
