import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Client, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { SessionService } from "../../gen/staragent/v1/session_service_pb.js";
import { bearerInterceptor } from "../../services/common/bearer.js";
import { createLogger, type Logger } from "../../services/common/log.js";
import type { RunningServer } from "../../services/common/server.js";
import { createMachine, type MachineServices, startNodeServer } from "../../services/node/index.js";
import { createTestTmux, type TestTmux } from "../support/tmux.js";

/** The node token of every in-process test Node. */
export const NODE_TOKEN = "hardening-node-token-0123456789";

/** A Node server in this process (real HTTP/2 on a loopback port) over a private tmux server. */
export interface NodeFixture {
  readonly tmux: TestTmux;
  readonly machine: MachineServices;
  readonly server: RunningServer;
  /** `$STARAGENT_HOME` of the Node (a fresh temporary folder). */
  readonly home: string;
  /** A scratch folder (real path) for session cwds. */
  readonly dir: string;
  /** SessionService over gRPC with the node token. */
  readonly sessions: Client<typeof SessionService>;
  /** Every line the Node logged so far. */
  readonly logLines: string[];
  close(): Promise<void>;
}

/** Starts a Node named `n1` in this process; on failure closes whatever it had started. */
export async function startNodeFixture(options: { env?: NodeJS.ProcessEnv } = {}): Promise<NodeFixture> {
  const env = options.env ?? process.env;
  const tmux = createTestTmux(env);
  const home = await mkdtemp(join(tmpdir(), "sa-hard-home-"));
  const dir = await realpath(await mkdtemp(join(tmpdir(), "sa-hard-dir-")));
  const logLines: string[] = [];
  const log: Logger = createLogger("test", "debug", (line) => logLines.push(line));
  const machine = createMachine({ nodeName: "n1", home, tmuxSocket: tmux.socketName, env, log });
  let server: RunningServer;
  try {
    server = await startNodeServer({ machine, host: "127.0.0.1", port: 0, nodeToken: NODE_TOKEN, log });
  } catch (err) {
    await machine.close();
    await tmux.close();
    await rm(home, { recursive: true, force: true });
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  const sessions = createClient(
    SessionService,
    createGrpcTransport({ baseUrl: server.url, interceptors: [bearerInterceptor(NODE_TOKEN)] }),
  );
  return {
    tmux,
    machine,
    server,
    home,
    dir,
    sessions,
    logLines,
    close: async () => {
      try {
        await machine.close();
        await server.close();
      } finally {
        await tmux.close();
        await rm(home, { recursive: true, force: true });
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}
