import type { DescService } from "@bufbuild/protobuf";
import { type Client, createClient } from "@connectrpc/connect";
import { TerminalStream } from "../../../gen/staragent/v1/terminal_stream_pb.js";
import { WorkspaceService } from "../../../gen/staragent/v1/workspace_service_pb.js";
import type { HubClient } from "./hub-client.js";

/*
 * Clients of the services only an open session's views call (its terminal, its Changes and Files tabs),
 * made over the Hub client's transport where they are used: their descriptors then load with those
 * views' chunks, not before the first session list.
 */

/** A client of `service` over a Hub client's transport, made once per Hub client. */
function perHub<S extends DescService>(service: S): (hub: HubClient) => Client<S> {
  const made = new WeakMap<HubClient, Client<S>>();
  return (hub) => {
    let client = made.get(hub);
    if (!client) {
      client = createClient(service, hub.transport);
      made.set(hub, client);
    }
    return client;
  };
}

/** TerminalStream over the Hub client's transport. */
export const terminalClient = perHub(TerminalStream);

/** WorkspaceService over the Hub client's transport. */
export const workspaceClient = perHub(WorkspaceService);
