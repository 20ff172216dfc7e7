import { type Client, createClient } from "@connectrpc/connect";
import { TerminalStream } from "../../../gen/staragent/v1/terminal_stream_pb.js";
import { WorkspaceService } from "../../../gen/staragent/v1/workspace_service_pb.js";
import type { HubClient } from "./hub-client.js";

/*
 * Clients of the services only an open session's views call (its terminal, its Changes and Files tabs),
 * made over the Hub client's transport where they are used: their descriptors then load with those
 * views' chunks, not before the first session list.
 */

/** TerminalStream over the Hub client's transport. */
export function terminalClient(hub: HubClient): Client<typeof TerminalStream> {
  return createClient(TerminalStream, hub.transport);
}

/** WorkspaceService over the Hub client's transport. */
export function workspaceClient(hub: HubClient): Client<typeof WorkspaceService> {
  return createClient(WorkspaceService, hub.transport);
}
