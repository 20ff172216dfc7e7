import type { DescService } from "@bufbuild/protobuf";
import { type ConnectRouter, createRouterTransport } from "@connectrpc/connect";
import { NodeService } from "../../gen/staragent/v1/node_service_pb.js";
import { SessionService } from "../../gen/staragent/v1/session_service_pb.js";
import { staragentRegistry } from "../common/descriptors.js";
import { FailureSlowdown } from "../common/failure-slowdown.js";
import type { Logger } from "../common/log.js";
import { OwnOrigins } from "../common/own-origins.js";
import { type RunningServer, startServer } from "../common/server.js";
import { type ChatBackend, type Machine, nodeRoutes } from "../node/index.js";
import { HubSessionService } from "./hub-session-service.js";
import { NodeRegistry } from "./node-registry.js";
import { HubNodeService } from "./node-service.js";
import { BrowserSessions, createWebHandler } from "./web.js";

/** What a Hub is built from. */
export interface HubServerOptions {
  /** The Hub's own machine, served as node `local`. */
  readonly machine: Machine;
  readonly chat?: ChatBackend;
  readonly host: string;
  readonly port: number;
  /** The user token (scripts send it as a bearer token; browsers exchange it for a cookie). */
  readonly token: string;
  readonly home: string;
  /** The built dashboard. */
  readonly webDist: string;
  readonly log: Logger;
  readonly commandLineNodes?: ReadonlyArray<{ id: string; url: string }>;
  /** The token for command-line nodes (`STARAGENT_NODE_TOKEN`). */
  readonly nodeToken?: string;
  /** Origins browsers may also reach the Hub by (`STARAGENT_ORIGINS`: a TLS proxy, a DNS name). */
  readonly origins?: readonly string[];
  /** Adds the local machine's further services (the terminal) to the in-process transport. */
  readonly localExtraRoutes?: (router: ConnectRouter) => void;
  /** Registers the Hub's further services, given the node registry (the terminal proxy). */
  readonly hubExtraRoutes?: (router: ConnectRouter, registry: NodeRegistry) => void;
  readonly hubExtraServices?: DescService[];
}

/** A running Hub. */
export interface RunningHub extends RunningServer {
  readonly registry: NodeRegistry;
}

/**
 * Starts the Hub: the dashboard and login pages, SessionService and NodeService routed over the
 * Hub's own machine (in-process) and the registered Nodes, on one port.
 */
export async function startHubServer(options: HubServerOptions): Promise<RunningHub> {
  const localTransport = createRouterTransport(
    nodeRoutes({ machine: options.machine, chat: options.chat, extraRoutes: options.localExtraRoutes }),
  );
  const registry = new NodeRegistry({
    localTransport,
    home: options.home,
    log: options.log.child("nodes"),
    commandLineNodes: options.commandLineNodes ?? [],
    commandLineToken: options.nodeToken,
  });
  await registry.load();
  const slowdown = new FailureSlowdown();
  const origins = new OwnOrigins(options.origins);
  const sessions = new BrowserSessions(options.token);
  const server = await startServer({
    host: options.host,
    port: options.port,
    routes: (router) => {
      router.service(SessionService, new HubSessionService(registry, options.log.child("sessions")));
      router.service(NodeService, new HubNodeService(registry));
      options.hubExtraRoutes?.(router, registry);
    },
    services: [SessionService, NodeService, ...(options.hubExtraServices ?? [])],
    registry: staragentRegistry(),
    auth: {
      tokens: [{ token: options.token, kind: "user" }],
      cookieSession: (cookie) => sessions.verify(cookie),
    },
    slowdown,
    origins,
    log: options.log.child("server"),
    fallback: createWebHandler({
      distDir: options.webDist,
      token: options.token,
      sessions,
      slowdown,
      origins,
      log: options.log.child("web"),
    }),
  });
  return { ...server, registry, close: server.close };
}
