import { parseArgs } from "node:util";
import type { Node } from "../../gen/staragent/v1/node_service_pb.js";
import type { EnvironmentConfig } from "../common/config.js";
import { connectHub, UsageError } from "./client.js";
import { reportNode } from "./nodes-report.js";
import { readSecret } from "./secret-input.js";

/**
 * `staragent nodes set NAME [--url URL] [--token | --token-file FILE] [--display-name TEXT] [--force]`:
 * changes a Node's address, token or name in place (UpdateNode), so a Node whose token was rotated or
 * that moved keeps its id and its sessions' names. The token is read as `nodes add` reads it (a
 * file, stdin or a hidden prompt), never from the command line.
 */
export async function setNode(args: string[], config: EnvironmentConfig, usage: string): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      url: { type: "string", default: "" },
      token: { type: "boolean", default: false },
      "token-file": { type: "string" },
      "display-name": { type: "string", default: "" },
      force: { type: "boolean", default: false },
    },
  });
  const [name] = positionals;
  const changesToken = values.token || values["token-file"] !== undefined;
  if (name === undefined || positionals.length > 1) throw new UsageError(usage);
  if (!changesToken && values.url === "" && values["display-name"] === "") {
    throw new UsageError(`nothing to change: give --url, --token, --token-file or --display-name\n${usage}`);
  }
  const resource = name.startsWith("nodes/") ? name : `nodes/${name}`;
  const token = changesToken
    ? await readSecret(
        values["token-file"],
        "the node token",
        `New node token for ${name} (from its $STARAGENT_HOME/node_token): `,
      )
    : "";
  const hub = await connectHub(config);
  const res = await hub.nodes.updateNode({
    name: resource,
    url: values.url,
    token,
    displayName: values["display-name"],
    force: values.force,
  });
  reportNode("changed", res.node as Node);
  return 0;
}
