import { mkdtemp, readdir, readlink, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Client, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { NodeService } from "../../gen/staragent/v1/node_service_pb.js";
import { SessionService } from "../../gen/staragent/v1/session_service_pb.js";
import { TerminalStream } from "../../gen/staragent/v1/terminal_stream_pb.js";
import { bearerInterceptor } from "../../services/common/bearer.js";
import { createLogger, type Logger } from "../../services/common/log.js";
import type { RunningServer } from "../../services/common/server.js";
import { type RunningHub, startHubServer } from "../../services/hub/hub-server.js";
import { createMachine, createTerminal, type MachineTerminal, startNodeServer } from "../../services/node/index.js";
import { createTestTmux, type TestTmux } from "./tmux.js";

/** One machine served in this process: its private tmux server, home, terminal and the server over it. */
export interface InProcessMachine {
  readonly tmux: TestTmux;
  readonly home: string;
  readonly terminal: MachineTerminal;
}

/**
 * A Hub and one remote Node (`far`) served from the test process, each over its own private tmux
 * server and home, for tests that look inside the servers (attachment maps, file descriptors) while
 * talking to them over real HTTP/2 on loopback.
 */
export interface InProcessHub {
  readonly hub: RunningHub;
  readonly node: RunningServer;
  readonly local: InProcessMachine;
  readonly far: InProcessMachine;
  readonly userToken: string;
  readonly nodeToken: string;
  /** Every log line both servers wrote. */
  readonly logLines: string[];
  readonly terminal: Client<typeof TerminalStream>;
  readonly sessions: Client<typeof SessionService>;
  readonly nodes: Client<typeof NodeService>;
  close(): Promise<void>;
}

/** Starts the Hub and its Node; closes what it started if a step fails. */
export async function startInProcessHub(): Promise<InProcessHub> {
  const logLines: string[] = [];
  const log = createLogger("test", "debug", (line) => logLines.push(line));
  const userToken = "user-token-for-in-process-tests";
  const nodeToken = "node-token-for-in-process-tests";
  const cleanups: Array<() => Promise<unknown>> = [];
  const close = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  };
  try {
    const far = await machineIn("far", log, cleanups);
    const node = await startNodeServer({
      machine: far.machine,
      chat: far.chat,
      host: "127.0.0.1",
      port: 0,
      nodeToken,
      log: log.child("far"),
      extraRoutes: far.terminal.routes,
      extraServices: far.terminal.services,
    });
    cleanups.push(() => node.close());
    const local = await machineIn("local", log, cleanups);
    const hub = await startHubServer({
      machine: local.machine,
      chat: local.chat,
      terminal: local.terminal,
      host: "127.0.0.1",
      port: 0,
      token: userToken,
      home: local.home,
      webDist: join(local.home, "no-dashboard"),
      log: log.child("hub"),
      commandLineNodes: [{ id: "far", url: node.url }],
      nodeToken,
    });
    cleanups.push(() => hub.close());
    const transport = createGrpcTransport({ baseUrl: hub.url, interceptors: [bearerInterceptor(userToken)] });
    return {
      hub,
      node,
      local,
      far,
      userToken,
      nodeToken,
      logLines,
      terminal: createClient(TerminalStream, transport),
      sessions: createClient(SessionService, transport),
      nodes: createClient(NodeService, transport),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

async function machineIn(name: string, log: Logger, cleanups: Array<() => Promise<unknown>>) {
  const tmux = createTestTmux();
  cleanups.push(() => tmux.close());
  const home = await mkdtemp(join(tmpdir(), `sa-${name}-`));
  cleanups.push(() => rm(home, { recursive: true, force: true }));
  const {
    machine,
    tmux: client,
    chat,
  } = createMachine({
    nodeName: name,
    home,
    tmuxSocket: tmux.socketName,
    env: process.env,
    log: log.child(name),
  });
  cleanups.push(() => machine.close());
  const terminal = createTerminal({ nodeName: name, tmux: client, log: log.child(name) });
  cleanups.push(() => terminal.close());
  return { tmux, home, terminal, machine, chat };
}

/** Pseudo-terminal masters this process holds open (node-pty keeps one per attachment). */
export async function openPtyMasters(pid: number | "self" = "self"): Promise<number> {
  let count = 0;
  for (const fd of await readdir(`/proc/${pid}/fd`)) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => "");
    if (target === "/dev/ptmx") count++;
  }
  return count;
}

/** tmux clients attached to a private tmux server. */
export async function tmuxClients(tmux: TestTmux): Promise<number> {
  const out = await tmux.run("list-clients", "-F", "#{client_pid}").catch(() => "");
  return out.split("\n").filter(Boolean).length;
}
