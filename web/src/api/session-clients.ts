import { type Client, createClient } from "@connectrpc/connect";
import { TerminalStream } from "../../../gen/staragent/v1/terminal_stream_pb.js";
import { WorkspaceService } from "../../../gen/staragent/v1/workspace_service_pb.js";
import type { HubClient } from "./hub-client.js";

/*
 * Clients of the services only an open session's views call (its terminal, its Changes and Files tabs),
 * made over the Hub client's transport where they are used: their descriptors then load with those
 * views' chunks, not before the first session list.
 */

const terminals = new WeakMap<HubClient, Client<typeof TerminalStream>>();
const workspaces = new WeakMap<HubClient, Client<typeof WorkspaceService>>();

/** TerminalStream over the Hub client's transport (made once per Hub client). */
export function terminalClient(hub: HubClient): Client<typeof TerminalStream> {
  const made = terminals.get(hub) ?? createClient(TerminalStream, hub.transport);
  terminals.set(hub, made);
  return made;
}

/** WorkspaceService over the Hub client's transport (made once per Hub client). */
export function workspaceClient(hub: HubClient): Client<typeof WorkspaceService> {
  const made = workspaces.get(hub) ?? createClient(WorkspaceService, hub.transport);
  workspaces.set(hub, made);
  return made;
}
