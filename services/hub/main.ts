import { hostname, networkInterfaces } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { warnIfCleartextBeyondLoopback } from "../common/cleartext-warning.js";
import { DEFAULT_HOST, DEFAULT_HUB_PORT, readEnvironment } from "../common/config.js";
import { createLogger, parseLogLevel } from "../common/log.js";
import { parseOrigins } from "../common/own-origins.js";
import { packageRoot } from "../common/package-root.js";
import { LOCAL_NODE_ID, NODE_ID_PATTERN } from "../common/resource-names.js";
import { parsePort, tuneServerHeap, waitForSignal } from "../common/server-process.js";
import { readServerTls, readTrustedCertificates } from "../common/tls-files.js";
import { checkToken, loadOrCreateToken } from "../common/tokens.js";
import { createMachine } from "../node/index.js";
import { startHubServer } from "./hub-server.js";

/** The built dashboard, in the repository or the installed package (`make package` puts it there). */
const WEB_DIST = "web/dist";

/**
 * `staragent hub`: the composition root of the Hub. Reads the environment and flags, builds the
 * local machine backend and the node registry, serves them until SIGINT or SIGTERM.
 */
export async function runHub(
  argv: string[],
  env: NodeJS.ProcessEnv,
  options: { readonly systemSession?: boolean } = {},
): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      host: { type: "string", default: DEFAULT_HOST },
      port: { type: "string", default: String(DEFAULT_HUB_PORT) },
      node: { type: "string", multiple: true, default: [] },
      "tls-cert": { type: "string" },
      "tls-key": { type: "string" },
      "node-ca": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(HUB_HELP);
    return;
  }
  tuneServerHeap();
  const config = readEnvironment(env);
  const port = parsePort(values.port);
  const nodes = values.node.map(parseNodeFlag);
  const tls = await readServerTls(values["tls-cert"], values["tls-key"]);
  const nodeCa = values["node-ca"] === undefined ? undefined : await readTrustedCertificates(values["node-ca"]);
  const log = createLogger("hub", parseLogLevel(config.logLevel));
  const tokenFile = join(config.home, "auth_token");
  const token = config.authToken
    ? {
        token: checkToken(config.authToken, "STARAGENT_AUTH_TOKEN", "unset it to use $STARAGENT_HOME/auth_token"),
        created: false,
      }
    : await loadOrCreateToken(tokenFile);
  const nodeToken =
    config.nodeToken === undefined
      ? undefined
      : checkToken(config.nodeToken, "STARAGENT_NODE_TOKEN", "unset it when no --node needs it");
  const vapidSubject = env.STARAGENT_VAPID_SUBJECT || undefined;
  if (vapidSubject !== undefined && !/^(mailto:[^@\s]+@[^@\s]+|https:\/\/\S+)$/.test(vapidSubject)) {
    throw new Error(
      `STARAGENT_VAPID_SUBJECT: ${JSON.stringify(vapidSubject.slice(0, 80))} is not a mailto: address or an https: URL (push services contact the Hub's operator there)`,
    );
  }
  const machine = createMachine({
    nodeName: LOCAL_NODE_ID,
    home: config.home,
    tmuxSocket: config.tmuxSocket,
    env,
    log,
  });
  const hub = await startHubServer({
    machine,
    host: values.host,
    port,
    token: token.token,
    home: config.home,
    webDist: join(packageRoot(), WEB_DIST),
    log,
    commandLineNodes: nodes,
    origins: config.origins === undefined ? [] : parseOrigins(config.origins, "STARAGENT_ORIGINS"),
    nodeToken,
    tls,
    nodeCa,
    vapidSubject,
  });
  const loop = nodes.find((node) => leadsToThisHub(node.url, values.host, hub.port));
  if (loop) {
    await hub.close();
    await machine.close();
    throw new Error(
      `--node ${loop.id}=${loop.url}: that is this Hub's own address; give the address the Node listens on ('staragent node' prints it)`,
    );
  }
  if (!tls) warnIfCleartextBeyondLoopback(values.host, log);
  const where = config.authToken
    ? "from STARAGENT_AUTH_TOKEN"
    : `in ${tokenFile}${token.created ? " (generated now)" : ""}`;
  // A system session's pane is shown by the dashboard's Terminal and kept in tmux's history: the
  // login link (which holds the token) is printed only to a person's own terminal.
  const login = options.systemSession
    ? `Log in: ${hub.url}/login with the token ${where}\n`
    : `Log in: ${hub.url}/login#token=${token.token}\n`;
  process.stdout.write(
    `StarAgent Hub listening on ${hub.url}\n${login}` +
      `(the token is ${where}; scripts send it as 'authorization: Bearer <token>')\n`,
  );
  await waitForSignal();
  log.info("stopping");
  await hub.close();
  await machine.close();
}

/** Host names that reach this machine whatever it is called. */
const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]", "::1", "0.0.0.0", "[::]"]);

/**
 * True when `url` is this Hub's own address (its port, on a name or address of this machine): a
 * Node registered so would make the Hub call itself. Other ways back (names that resolve here,
 * another Hub) are refused at run time by the loop guard and shown by the health check.
 */
export function leadsToThisHub(url: string, bindHost: string, port: number): boolean {
  const parsed = new URL(url);
  const urlPort = Number(parsed.port || (parsed.protocol === "https:" ? 443 : 80));
  if (urlPort !== port) return false;
  const host = parsed.hostname.toLowerCase();
  const local = new Set([...LOOPBACK_NAMES, bindHost.toLowerCase(), hostname().toLowerCase()]);
  for (const addresses of Object.values(networkInterfaces())) {
    for (const a of addresses ?? []) local.add(a.family === "IPv6" ? `[${a.address}]` : a.address);
  }
  return local.has(host);
}

/** Parses `--node NAME=URL`. */
function parseNodeFlag(value: string): { id: string; url: string } {
  const eq = value.indexOf("=");
  const id = value.slice(0, eq);
  const url = value.slice(eq + 1);
  if (eq <= 0 || !NODE_ID_PATTERN.test(id) || id === LOCAL_NODE_ID || !/^https?:\/\/[^/]+/.test(url)) {
    throw new Error(`--node ${value}: expected NAME=http://host:port (NAME: lowercase letters, digits, '-')`);
  }
  return { id, url };
}

const HUB_HELP = `Usage: staragent hub [--host 127.0.0.1] [--port 8080] [--node NAME=URL ...]
                     [--tls-cert FILE --tls-key FILE] [--node-ca FILE]

Serves the StarAgent dashboard and API for this machine's tmux sessions (node
'local') and for the Nodes named with --node (reached with $STARAGENT_NODE_TOKEN)
or added later with 'staragent nodes add'. Every call needs the user token:
$STARAGENT_AUTH_TOKEN, or $STARAGENT_HOME/auth_token (generated on first start,
mode 0600). Binds to loopback unless --host says otherwise.

  --tls-cert, --tls-key  serve HTTPS (HTTP/2 and HTTP/1.1) with this certificate
                         and key (PEM); login cookies are then Secure
  --node-ca FILE         also trust these certificates (PEM) for https:// Node
                         URLs, e.g. a Node's self-signed certificate
`;
