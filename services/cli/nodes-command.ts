import { parseArgs } from "node:util";
import { toJson } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Connectivity, type Node, NodeSchema } from "../../gen/staragent/v1/node_service_pb.js";
import type { EnvironmentConfig } from "../common/config.js";
import { connectHub, type HubClients, UsageError } from "./client.js";
import type { Command } from "./command.js";
import { ago, alignColumns, enumWord } from "./format.js";
import { reportNode } from "./nodes-report.js";
import { readSecret } from "./secret-input.js";

const USAGE = [
  "usage: staragent nodes ls [--json]",
  "       staragent nodes add NAME URL [--token-file FILE] [--display-name TEXT] [--force]",
  "       staragent nodes set NAME [--url URL] [--token | --token-file FILE] [--display-name TEXT] [--force]",
  "       staragent nodes rm NAME",
  "The Node's token (its $STARAGENT_HOME/node_token) comes from --token-file FILE (- for stdin), or",
  "stdin, or a prompt; never from the command line. The Hub checks the Node first and refuses one it",
  "cannot reach or that refuses the token, unless --force.",
].join("\n");

/** Largest page asked for: every Hub's nodes fit in one; the loop follows page tokens beyond it. */
const LIST_PAGE_SIZE = 500;

/**
 * `staragent nodes ls|add|rm`: the Nodes a Hub shows, through its NodeService. Tokens are read from a
 * file, stdin or a prompt, never from arguments (which `ps` shows to every user of the machine), and
 * never printed.
 */
export const nodesCommand: Command = {
  run: async (args, config) => {
    const [verb, ...rest] = args;
    if (verb === "ls" || verb === "list") return list(rest, await connectHub(config));
    if (verb === "add") return add(rest, config);
    if (verb === "set") return (await import("./nodes-set-command.js")).setNode(rest, config, USAGE);
    if (verb === "rm" || verb === "remove") return remove(rest, await connectHub(config));
    throw new UsageError(USAGE);
  },
};

async function list(args: string[], hub: HubClients): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { json: { type: "boolean" } } });
  if (positionals.length > 0) throw new UsageError(USAGE);
  const nodes: Node[] = [];
  let pageToken = "";
  do {
    const res = await hub.nodes.listNodes({ pageSize: LIST_PAGE_SIZE, pageToken });
    nodes.push(...res.nodes);
    pageToken = res.nextPageToken;
  } while (pageToken !== "");
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ nodes: nodes.map((n) => toJson(NodeSchema, n)) }, null, 2)}\n`);
  } else {
    process.stdout.write(`${nodeTable(nodes)}\n`);
  }
  return 0;
}

async function add(args: string[], config: EnvironmentConfig): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      "token-file": { type: "string" },
      "display-name": { type: "string", default: "" },
      force: { type: "boolean", default: false },
    },
  });
  const [name, url] = positionals;
  if (name === undefined || url === undefined || positionals.length > 2) throw new UsageError(USAGE);
  const token = await readSecret(
    values["token-file"],
    "the node token",
    `Node token for ${name} (from its $STARAGENT_HOME/node_token): `,
  );
  const hub = await connectHub(config);
  const res = await hub.nodes.addNode({
    nodeId: name,
    url,
    token,
    displayName: values["display-name"],
    force: values.force,
  });
  reportNode("added", res.node as Node);
  return 0;
}

async function remove(args: string[], hub: HubClients): Promise<number> {
  const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
  const [name] = positionals;
  if (name === undefined || positionals.length > 1) throw new UsageError(USAGE);
  const resource = name.startsWith("nodes/") ? name : `nodes/${name}`;
  await hub.nodes.removeNode({ name: resource });
  process.stdout.write(`removed ${resource} (its sessions keep running on it)\n`);
  return 0;
}

/** One line per node, aligned, for `staragent nodes ls`: connectivity, last seen, version, host, error. */
export function nodeTable(nodes: readonly Node[], now = Date.now()): string {
  const rows = [
    ["NODE", "CONNECTIVITY", "LAST SEEN", "VERSION", "HOST", "URL", "LAST ERROR"],
    ...nodes.map((n) => [
      n.name.replace(/^nodes\//, ""),
      enumWord(Connectivity, n.connectivity),
      n.lastSeenTime ? ago(timestampDate(n.lastSeenTime), now) : "never",
      n.version || "-",
      n.hostname || "-",
      n.local ? "(the Hub's machine)" : n.url,
      n.lastError,
    ]),
  ];
  return alignColumns(rows);
}
