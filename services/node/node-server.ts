import { NodeService } from "../../gen/staragent/v1/node_service_pb.js";
import { staragentRegistry } from "../common/descriptors.js";
import type { ListenerTls } from "../common/listener.js";
import type { Logger } from "../common/log.js";
import { type RunningServer, startServer } from "../common/server.js";
import { MACHINE_SERVICES, type MachineServices, machineRoutes } from "./create-machine.js";
import { createNodeInfoService } from "./node-info-service.js";

/** What a Node server serves. */
export interface NodeServerOptions {
  /** The machine whose services (sessions, chat, terminal) the Node serves. */
  readonly machine: MachineServices;
  readonly host: string;
  readonly port: number;
  /** The node token; the only credential a Node accepts (a Hub's user token never is). */
  readonly nodeToken: string;
  readonly log: Logger;
  /** Serve HTTPS (HTTP/2 and HTTP/1.1) with this certificate; cleartext when absent. */
  readonly tls?: ListenerTls;
}

/** Starts the Remote Node API over one machine (and `GetNode` for itself, the Hub's health check). */
export function startNodeServer(options: NodeServerOptions): Promise<RunningServer> {
  const routes = machineRoutes(options.machine);
  return startServer({
    role: "node",
    host: options.host,
    port: options.port,
    tls: options.tls,
    routes: (router) => {
      routes(router);
      router.service(NodeService, createNodeInfoService(options.machine.nodeName));
    },
    services: [...MACHINE_SERVICES, NodeService],
    registry: staragentRegistry(),
    auth: {
      tokens: [{ token: options.nodeToken, kind: "node" }],
      tokenHint: "the node token: $STARAGENT_NODE_TOKEN or $STARAGENT_HOME/node_token on the Node",
    },
    log: options.log.child("server"),
  });
}
