import { LoginService } from "../../gen/staragent/v1/login_service_pb.js";
import { NodeService } from "../../gen/staragent/v1/node_service_pb.js";
import { NotificationService } from "../../gen/staragent/v1/notification_service_pb.js";
import { SessionService } from "../../gen/staragent/v1/session_service_pb.js";
import { TerminalStream } from "../../gen/staragent/v1/terminal_stream_pb.js";
import { WorkspaceService } from "../../gen/staragent/v1/workspace_service_pb.js";
import { staragentRegistry } from "../common/descriptors.js";
import { FailureSlowdown } from "../common/failure-slowdown.js";
import { newInstanceId } from "../common/hops.js";
import type { ListenerTls } from "../common/listener.js";
import type { Logger } from "../common/log.js";
import { OwnOrigins } from "../common/own-origins.js";
import { type RunningServer, startServer } from "../common/server.js";
import { type MachineServices, machineRoutes } from "../node/index.js";
import { HubSessionService } from "./hub-session-service.js";
import { HubWorkspaceService } from "./hub-workspace-service.js";
import { createLocalTransport } from "./local-transport.js";
import { HubLoginService } from "./login-service.js";
import { LoginSessions } from "./login-sessions.js";
import { NodeRegistry } from "./node-registry.js";
import { HubNodeService } from "./node-service.js";
import type { DispatcherTiming } from "./notifications/dispatcher.js";
import { type HubNotifications, startHubNotifications } from "./notifications/hub-notifications.js";
import { loadOrCreateVapidKeys } from "./notifications/vapid-keys.js";
import { HubTerminalProxy } from "./terminal-proxy.js";
import { createWebHandler } from "./web.js";

/** What a Hub is built from. */
export interface HubServerOptions {
  /** The Hub's own machine (sessions, chat, terminal), served in-process as node `local`. */
  readonly machine: MachineServices;
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
  /** Attachments one caller may hold through the Hub (default MAX_HUB_ATTACHMENTS_PER_CALLER). */
  readonly maxAttachmentsPerCaller?: number;
  /** Serve HTTPS (HTTP/2 and HTTP/1.1) with this certificate, and `Secure` cookies; cleartext when absent. */
  readonly tls?: ListenerTls;
  /** Certificates (PEM) trusted for `https://` Node URLs besides the public roots (`--node-ca`). */
  readonly nodeCa?: string;
  /** The `sub` of the Hub's VAPID JWT (`STARAGENT_VAPID_SUBJECT`): a mailto: or https: contact. */
  readonly vapidSubject?: string;
  /** Shorter retry waits for notifications (tests). */
  readonly notificationTiming?: Partial<DispatcherTiming>;
}

/** A running Hub. */
export interface RunningHub extends RunningServer {
  readonly registry: NodeRegistry;
  /** The Hub's TerminalStream (its relayed attachments). */
  readonly terminal: HubTerminalProxy;
  /** Web Push and webhooks (`notification_service.proto`). */
  readonly notifications: HubNotifications;
}

/**
 * Starts the Hub: the dashboard and login pages, SessionService, NodeService and TerminalStream
 * routed over the Hub's own machine (in-process) and the registered Nodes, on one port.
 */
export async function startHubServer(options: HubServerOptions): Promise<RunningHub> {
  const localTransport = createLocalTransport(machineRoutes(options.machine));
  const instanceId = newInstanceId();
  // Read before the registry starts its Nodes' health checks, which must find the port listening soon.
  const sessions = new LoginSessions(options.token, options.home, options.log.child("logins"));
  await sessions.load();
  // Made on the first start (a key pair generated): before the health checks too.
  const vapidKeys = await loadOrCreateVapidKeys(options.home, options.log.child("notifications"));
  const registry = new NodeRegistry({
    instanceId,
    localTransport,
    home: options.home,
    log: options.log.child("nodes"),
    commandLineNodes: options.commandLineNodes ?? [],
    commandLineToken: options.nodeToken,
    nodeCa: options.nodeCa,
    deferHealthChecks: true,
  });
  await registry.load();
  const terminal = new HubTerminalProxy(registry, options.log.child("terminal"), options.maxAttachmentsPerCaller);
  const slowdown = new FailureSlowdown();
  const origins = new OwnOrigins(options.origins);
  const sessionService = new HubSessionService(registry, options.log.child("sessions"));
  let server: RunningServer | undefined;
  let notifications: HubNotifications | undefined;
  try {
    notifications = await startHubNotifications({
      home: options.home,
      sessions: sessionService,
      // Links in webhooks open the dashboard where people reach it (a proxy's origin first).
      dashboardUrl: () => options.origins?.[0] ?? server?.url ?? "",
      log: options.log.child("notifications"),
      vapidSubject: options.vapidSubject,
      timing: options.notificationTiming,
      keys: vapidKeys,
    });
    const notificationService = notifications.service;
    server = await startServer({
      role: "hub",
      instanceId,
      host: options.host,
      port: options.port,
      tls: options.tls,
      routes: (router) => {
        router.service(SessionService, sessionService);
        router.service(NodeService, new HubNodeService(registry));
        router.service(TerminalStream, terminal);
        router.service(WorkspaceService, new HubWorkspaceService(registry));
        router.service(LoginService, new HubLoginService(sessions));
        router.service(NotificationService, notificationService);
      },
      services: [SessionService, NodeService, TerminalStream, WorkspaceService, LoginService, NotificationService],
      registry: staragentRegistry(),
      auth: {
        tokens: [{ token: options.token, kind: "user" }],
        cookieSession: (cookie, key) => sessions.verify(cookie, key),
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
        secureCookies: options.tls !== undefined,
      }),
    });
  } catch (err) {
    await notifications?.close();
    await registry.close();
    throw err;
  }
  registry.startHealthChecks();

  let closing: Promise<void> | undefined;
  const started = { server, notifications };
  return {
    ...started.server,
    registry,
    terminal,
    notifications: started.notifications,
    close: () => {
      closing ??= (async () => {
        // Viewers first get `exited` and a clean end, then nothing of the machine's terminal is left.
        await terminal.close("the Hub is stopping");
        await started.notifications.close();
        await options.machine.terminal.close();
        await registry.close();
        await started.server.close();
      })();
      return closing;
    },
  };
}
