import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { type Client, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { NodeService } from "../../gen/staragent/v1/node_service_pb.js";
import { NotificationService } from "../../gen/staragent/v1/notification_service_pb.js";
import { SessionService } from "../../gen/staragent/v1/session_service_pb.js";
import { TerminalStream } from "../../gen/staragent/v1/terminal_stream_pb.js";
import { WorkspaceService } from "../../gen/staragent/v1/workspace_service_pb.js";
import { bearerInterceptor } from "../common/bearer.js";
import type { EnvironmentConfig } from "../common/config.js";
import { LOCAL_NODE_ID, sessionResourceName } from "../common/resource-names.js";

/** The Hub's services, as the CLI calls them (gRPC over HTTP/2, like any script). */
export interface HubClients {
  readonly sessions: Client<typeof SessionService>;
  readonly nodes: Client<typeof NodeService>;
  readonly notifications: Client<typeof NotificationService>;
  readonly terminal: Client<typeof TerminalStream>;
  readonly workspace: Client<typeof WorkspaceService>;
  readonly url: string;
}

/** A failure the CLI reports in one line and exits with. */
export class UsageError extends Error {}

/** Reads the user token: `$STARAGENT_AUTH_TOKEN`, else `$STARAGENT_HOME/auth_token`. */
export async function readUserToken(config: EnvironmentConfig): Promise<string> {
  if (config.authToken) return config.authToken;
  const file = join(config.home, "auth_token");
  try {
    const token = (await readFile(file, "utf8")).trim();
    if (token !== "") return token;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  throw new UsageError(`no token: set STARAGENT_AUTH_TOKEN, or start the Hub once so that it writes ${file}`);
}

/** Connects to the Hub at `config.hubUrl` with the user token. */
export async function connectHub(config: EnvironmentConfig): Promise<HubClients> {
  const token = await readUserToken(config);
  const transport = createGrpcTransport({ baseUrl: config.hubUrl, interceptors: [bearerInterceptor(token)] });
  return {
    sessions: createClient(SessionService, transport),
    nodes: createClient(NodeService, transport),
    notifications: createClient(NotificationService, transport),
    terminal: createClient(TerminalStream, transport),
    workspace: createClient(WorkspaceService, transport),
    url: config.hubUrl,
  };
}

/**
 * The resource name for a session argument: `NAME` (on the Hub's own machine), `NODE/NAME`, or a
 * full `nodes/NODE/sessions/NAME`.
 */
export function sessionArgument(arg: string): string {
  if (arg.startsWith("nodes/")) return arg;
  const slash = arg.indexOf("/");
  return slash > 0
    ? sessionResourceName(arg.slice(0, slash), arg.slice(slash + 1))
    : sessionResourceName(LOCAL_NODE_ID, arg);
}
