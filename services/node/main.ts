import { hostname } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { warnIfCleartextBeyondLoopback } from "../common/cleartext-warning.js";
import { DEFAULT_HOST, DEFAULT_NODE_PORT, readEnvironment } from "../common/config.js";
import { createLogger, parseLogLevel } from "../common/log.js";
import { LOCAL_NODE_ID, NODE_ID_PATTERN } from "../common/resource-names.js";
import { parsePort, waitForSignal } from "../common/server-process.js";
import { readServerTls } from "../common/tls-files.js";
import { checkToken, loadOrCreateToken } from "../common/tokens.js";
import { createMachine } from "./create-machine.js";
import { startNodeServer } from "./node-server.js";

/**
 * `staragent node`: the composition root of a Node. Reads the environment and flags, builds the
 * machine backend and serves it until SIGINT or SIGTERM.
 */
export async function runNode(argv: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      name: { type: "string" },
      host: { type: "string", default: DEFAULT_HOST },
      port: { type: "string", default: String(DEFAULT_NODE_PORT) },
      "tls-cert": { type: "string" },
      "tls-key": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(NODE_HELP);
    return;
  }
  const config = readEnvironment(env);
  const name = values.name ?? defaultNodeName(hostname());
  if (!NODE_ID_PATTERN.test(name) || name === LOCAL_NODE_ID) {
    throw new Error(
      `--name ${name}: use lowercase letters, digits and '-', starting with a letter ('local' is the Hub's)`,
    );
  }
  const port = parsePort(values.port);
  const tls = await readServerTls(values["tls-cert"], values["tls-key"]);
  const log = createLogger(`node:${name}`, parseLogLevel(config.logLevel));
  const tokenPath = join(config.home, "node_token");
  const token = config.nodeToken
    ? {
        token: checkToken(config.nodeToken, "STARAGENT_NODE_TOKEN", "unset it to use $STARAGENT_HOME/node_token"),
        created: false,
      }
    : await loadOrCreateToken(tokenPath, "STARAGENT_NODE_TOKEN");
  const machine = createMachine({ nodeName: name, home: config.home, tmuxSocket: config.tmuxSocket, env, log });
  const server = await startNodeServer({ machine, host: values.host, port, nodeToken: token.token, log, tls });
  if (!config.nodeToken) {
    log.info(token.created ? "generated a node token" : "using the node token", { file: tokenPath });
  }
  if (!tls) warnIfCleartextBeyondLoopback(values.host, log);
  process.stdout.write(`staragent node ${name} listening on ${server.url}\n`);
  await waitForSignal();
  log.info("stopping");
  await machine.close();
  await server.close();
}

const NODE_HELP = `Usage: staragent node [--name NAME] [--host 127.0.0.1] [--port 8081]
                      [--tls-cert FILE --tls-key FILE]

Serves this machine's tmux sessions to a StarAgent Hub. Every call needs the node
token: $STARAGENT_NODE_TOKEN, or the file $STARAGENT_HOME/node_token (generated on
first start, mode 0600). Binds to loopback unless --host says otherwise.

  --tls-cert, --tls-key  serve HTTPS (HTTP/2) with this certificate and key (PEM);
                         the Hub then adds the Node as https://... (a self-signed
                         certificate needs the Hub's --node-ca or NODE_EXTRA_CA_CERTS)
`;

/** A node id from the host name (`Build-Box.lan` → `build-box-lan`), or `node` when none can be made. */
export function defaultNodeName(host: string): string {
  const name = host
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, "-")
    .replace(/^[^a-z]+/, "")
    .slice(0, 63)
    .replace(/-+$/, "");
  return NODE_ID_PATTERN.test(name) && name !== LOCAL_NODE_ID ? name : "node";
}
