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
import {
  createMachine,
  type MachineServices,
  type MachineTerminal,
  startNodeServer,
} from "../../services/node/index.js";
import { createTestTmux, type TestTmux } from "./tmux.js";

/** One machine served in this process: its private tmux server, home, terminal and the server over it. */
export interface InProcessMachine {
  readonly tmux: TestTmux;
  readonly home: string;
  readonly terminal: MachineTerminal;
  /** Its services (sessions, chat, terminal), as the Node or Hub over it serves them. */
  readonly machine: MachineServices;
}

/** A Hub served from the test process over its own private tmux server and home. */
export interface InProcessHubOnly {
  readonly hub: RunningHub;
  readonly local: InProcessMachine;
  readonly userToken: string;
  /** Every log line the servers started here wrote. */
  readonly logLines: string[];
  readonly terminal: Client<typeof TerminalStream>;
  readonly sessions: Client<typeof SessionService>;
  readonly nodes: Client<typeof NodeService>;
  close(): Promise<void>;
}

/**
 * A Hub and one remote Node (`far`) served from the test process, each over its own private tmux
 * server and home, for tests that look inside the servers (attachment maps, file descriptors) while
 * talking to them over real HTTP/2 on loopback.
 */
export interface InProcessHub extends InProcessHubOnly {
  readonly node: RunningServer;
  readonly far: InProcessMachine;
  readonly nodeToken: string;
}

/** What the in-process Hub is started with. */
export interface InProcessHubOptions {
  readonly maxAttachmentsPerCaller?: number;
}

/** Starts the Hub and its Node; closes what it started if a step fails. */
export async function startInProcessHub(options: InProcessHubOptions = {}): Promise<InProcessHub> {
  const logLines: string[] = [];
  const log = createLogger("test", "debug", (line) => logLines.push(line));
  const nodeToken = "node-token-for-in-process-tests";
  const cleanups: Array<() => Promise<unknown>> = [];
  try {
    const far = await machineIn("far", log, cleanups);
    const node = await startNodeServer({
      machine: far.machine,
      host: "127.0.0.1",
      port: 0,
      nodeToken,
      log: log.child("far"),
    });
    cleanups.push(() => node.close());
    const hub = await startHub([{ id: "far", url: node.url }], nodeToken, options, log, logLines, cleanups);
    return { ...hub, node, far, nodeToken };
  } catch (err) {
    await closeAll(cleanups);
    throw err;
  }
}

/**
 * Starts only the Hub, with `nodes` (Nodes running elsewhere, e.g. as processes a test may kill)
 * reached with `nodeToken`.
 */
export async function startInProcessHubFor(
  nodes: ReadonlyArray<{ id: string; url: string }>,
  nodeToken: string,
  options: InProcessHubOptions = {},
): Promise<InProcessHubOnly> {
  const logLines: string[] = [];
  const log = createLogger("test", "debug", (line) => logLines.push(line));
  const cleanups: Array<() => Promise<unknown>> = [];
  try {
    return await startHub(nodes, nodeToken, options, log, logLines, cleanups);
  } catch (err) {
    await closeAll(cleanups);
    throw err;
  }
}

async function startHub(
  nodes: ReadonlyArray<{ id: string; url: string }>,
  nodeToken: string,
  options: InProcessHubOptions,
  log: Logger,
  logLines: string[],
  cleanups: Array<() => Promise<unknown>>,
): Promise<InProcessHubOnly> {
  const userToken = "user-token-for-in-process-tests";
  const local = await machineIn("local", log, cleanups);
  const hub = await startHubServer({
    machine: local.machine,
    host: "127.0.0.1",
    port: 0,
    token: userToken,
    home: local.home,
    webDist: join(local.home, "no-dashboard"),
    log: log.child("hub"),
    commandLineNodes: nodes,
    nodeToken,
    maxAttachmentsPerCaller: options.maxAttachmentsPerCaller,
  });
  cleanups.push(() => hub.close());
  const transport = createGrpcTransport({ baseUrl: hub.url, interceptors: [bearerInterceptor(userToken)] });
  return {
    hub,
    local,
    userToken,
    logLines,
    terminal: createClient(TerminalStream, transport),
    sessions: createClient(SessionService, transport),
    nodes: createClient(NodeService, transport),
    close: () => closeAll(cleanups),
  };
}

/** Runs the cleanups in reverse order, each even if an earlier one failed. */
async function closeAll(cleanups: Array<() => Promise<unknown>>): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
}

async function machineIn(
  name: string,
  log: Logger,
  cleanups: Array<() => Promise<unknown>>,
): Promise<InProcessMachine> {
  const tmux = createTestTmux();
  cleanups.push(() => tmux.close());
  const home = await mkdtemp(join(tmpdir(), `sa-${name}-`));
  cleanups.push(() => rm(home, { recursive: true, force: true }));
  const machine = createMachine({
    nodeName: name,
    home,
    tmuxSocket: tmux.socketName,
    env: process.env,
    log: log.child(name),
  });
  cleanups.push(() => machine.close());
  return { tmux, home, terminal: machine.terminal, machine };
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
