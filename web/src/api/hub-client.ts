import { type Client, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { createContext } from "@lit/context";
import { NodeService } from "../../../gen/staragent/v1/node_service_pb.js";
import { SessionService } from "../../../gen/staragent/v1/session_service_pb.js";
import { TerminalStream } from "../../../gen/staragent/v1/terminal_stream_pb.js";

/** The three services of the Hub, as the dashboard calls them. */
export interface HubClient {
  readonly sessions: Client<typeof SessionService>;
  readonly nodes: Client<typeof NodeService>;
  readonly terminal: Client<typeof TerminalStream>;
}

/**
 * Clients of the Hub that served the page, over Connect with the binary format (smaller and faster to
 * decode than JSON). Calls carry the login cookie because they go to the page's own origin.
 */
export function createHubClient(baseUrl: string = location.origin): HubClient {
  const transport: Transport = createConnectTransport({ baseUrl, useBinaryFormat: true });
  return {
    sessions: createClient(SessionService, transport),
    nodes: createClient(NodeService, transport),
    terminal: createClient(TerminalStream, transport),
  };
}

/** Components get the Hub client from `sa-app` through this context, never from a module singleton. */
export const hubContext = createContext<HubClient>(Symbol("staragent-hub"));
