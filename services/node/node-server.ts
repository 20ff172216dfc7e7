import type { ConnectRouter } from "@connectrpc/connect";
import { NodeService } from "../../gen/staragent/v1/node_service_pb.js";
import { SessionService } from "../../gen/staragent/v1/session_service_pb.js";
import { staragentRegistry } from "../common/descriptors.js";
import type { ListenerTls } from "../common/listener.js";
import type { Logger } from "../common/log.js";
import { type RunningServer, startServer } from "../common/server.js";
import type { Machine } from "./machine.js";
import { createNodeInfoService } from "./node-info-service.js";
import { type ChatBackend, MachineSessionService } from "./session-service.js";

/** What a Node server serves. */
export interface NodeServerOptions {
  readonly machine: Machine;
  readonly host: string;
  readonly port: number;
  /** The node token; the only credential a Node accepts (a Hub's user token never is). */
  readonly nodeToken: string;
  readonly log: Logger;
  readonly chat?: ChatBackend;
  /** Registers further services over the same machine (the terminal). */
  readonly extraRoutes?: (router: ConnectRouter) => void;
  readonly extraServices?: Parameters<typeof startServer>[0]["services"];
  /** Serve HTTPS (HTTP/2 and HTTP/1.1) with this certificate; cleartext when absent. */
  readonly tls?: ListenerTls;
}

/** The routes of a Node: its machine's SessionService (and what `extraRoutes` adds). */
export function nodeRoutes(options: Pick<NodeServerOptions, "machine" | "chat" | "extraRoutes">) {
  return (router: ConnectRouter) => {
    router.service(SessionService, new MachineSessionService(options.machine, options.chat));
    options.extraRoutes?.(router);
  };
}

/** Starts the Remote Node API over one machine (and `GetNode` for itself, the Hub's health check). */
export function startNodeServer(options: NodeServerOptions): Promise<RunningServer> {
  const routes = nodeRoutes(options);
  return startServer({
    role: "node",
    host: options.host,
    port: options.port,
    tls: options.tls,
    routes: (router) => {
      routes(router);
      router.service(NodeService, createNodeInfoService(options.machine.nodeName));
    },
    services: [SessionService, NodeService, ...(options.extraServices ?? [])],
    registry: staragentRegistry(),
    auth: {
      tokens: [{ token: options.nodeToken, kind: "node" }],
      tokenHint: "the node token: $STARAGENT_NODE_TOKEN or $STARAGENT_HOME/node_token on the Node",
    },
    log: options.log.child("server"),
  });
}
