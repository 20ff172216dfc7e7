import { type Client, createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { createContext } from "@lit/context";
import { NodeService } from "../../../gen/staragent/v1/node_service_pb.js";
import { NotificationService } from "../../../gen/staragent/v1/notification_service_pb.js";
import { SessionService } from "../../../gen/staragent/v1/session_service_pb.js";
import { LOGIN_KEY_HEADER, loginKey } from "./login-key.js";

/**
 * The services of the Hub the first session list calls, and the transport for the others (an open
 * session's terminal and workspace: session-clients.ts).
 */
export interface HubClient {
  readonly transport: Transport;
  readonly sessions: Client<typeof SessionService>;
  readonly nodes: Client<typeof NodeService>;
  readonly notifications: Client<typeof NotificationService>;
}

/**
 * Clients of the Hub that served the page, over Connect with the binary format (smaller and faster to
 * decode than JSON). Calls carry the login cookie because they go to the page's own origin, and the
 * login's key (login-key.ts), without which the Hub does not accept the cookie.
 */
export function createHubClient(baseUrl: string = location.origin): HubClient {
  const transport: Transport = createConnectTransport({ baseUrl, useBinaryFormat: true, interceptors: [sendLoginKey] });
  return {
    transport,
    sessions: createClient(SessionService, transport),
    nodes: createClient(NodeService, transport),
    notifications: createClient(NotificationService, transport),
  };
}

const sendLoginKey: Interceptor = (next) => (req) => {
  req.header.set(LOGIN_KEY_HEADER, loginKey());
  return next(req);
};

/** Components get the Hub client from `sa-app` through this context, never from a module singleton. */
export const hubContext = createContext<HubClient>(Symbol("staragent-hub"));
