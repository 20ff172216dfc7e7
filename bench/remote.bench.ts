import { spawn } from "node:child_process";
import { appendFile, readFile } from "node:fs/promises";
import { type Client, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { type Session, SessionStatus, StatusReason } from "../gen/staragent/v1/session_pb.js";
import { SessionService, WatchEventType } from "../gen/staragent/v1/session_service_pb.js";
import { TerminalStream } from "../gen/staragent/v1/terminal_stream_pb.js";
import { bearerInterceptor } from "../services/common/bearer.js";
import { NEXT_COMMAND, type TmuxArgument } from "../services/node/tmux/client.js";
import { rememberProcess } from "../test/support/leftovers.js";
import { type ServerProcess, startServerProcess } from "../test/support/servers.js";
import { TestViewer } from "../test/support/test-viewer.js";
import { createTestTmux, type TestTmux } from "../test/support/tmux.js";
import { waitFor } from "../test/support/wait.js";
import { type AgentFleet, FLEET_TOKEN, type FleetSession, startAgentFleet } from "./agent-fleet.js";
import { turnRecords } from "./status-latency.bench.js";
import { apiPath, connectPath, directPath, echoLatency, type Path, percentile, SHELL } from "./terminal.bench.js";

/** Sessions on each of the three Nodes (BENCH_REMOTE_SESSIONS overrides it, for a quick try). */
const SESSIONS_PER_NODE = Number(process.env.BENCH_REMOTE_SESSIONS ?? 100);
/** ListSessions calls timed over `nodes/-`, in each of the two conditions. */
const LIST_CALLS = 100;
/** Status changes timed from a native log write on a Node to the Hub's WatchSessions event. */
const STATUS_SAMPLES = 40;
/** Pause between opening and completing a turn, and between turns (random, to hit every loop phase). */
const TURN_MS = { min: 100, max: 700 } as const;
const GAP_MS = { min: 200, max: 1_500 } as const;
/** Longest wait for one status event before the benchmark fails (a missed change, not a slow one). */
const EVENT_TIMEOUT_MS = 15_000;
/** Viewers attached through the Hub for the memory figure. */
const VIEWERS = 20;
/** How long the Hub settles after the viewers attach before its memory is read. */
const SETTLE_MS = 3_000;
const HUB_TOKEN = "bench-remote-hub-token";

/** One Node besides the fleet's: a private tmux server with idle `sleep` sessions. */
interface SleepNode {
  readonly name: string;
  readonly tmux: TestTmux;
  readonly server: ServerProcess;
}

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]) / 1024;
}

function pause(range: { min: number; max: number }): Promise<void> {
  return new Promise((r) => setTimeout(r, range.min + Math.random() * (range.max - range.min)));
}

function fmt(n: number): string {
  return n >= 100 ? n.toFixed(0) : n.toFixed(2);
}

/** Starts a Node with `count` idle sessions (made in a few tmux calls) and, for the echo, a bash one. */
async function startSleepNode(name: string, count: number): Promise<SleepNode> {
  const tmux = createTestTmux();
  const CHUNK = 50;
  for (let i = 0; i < count; i += CHUNK) {
    const args: TmuxArgument[] = [];
    for (let j = i; j < Math.min(count, i + CHUNK); j++) {
      if (args.length > 0) args.push(NEXT_COMMAND);
      args.push("new-session", "-d", "-s", `${name}-idle-${String(j).padStart(3, "0")}`, "sleep 86400");
    }
    await tmux.client.run(args);
  }
  const server = await startServerProcess({
    kind: "node",
    tmuxSocket: tmux.socketName,
    token: FLEET_TOKEN,
    args: ["--name", name],
  });
  return { name, tmux, server };
}

/** Times `calls` full ListSessions over every node; sorted ms. Fails if a node is named unreachable. */
async function timeLists(client: Client<typeof SessionService>, expected: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < LIST_CALLS; i++) {
    const start = performance.now();
    const res = await client.listSessions({ parent: "nodes/-", pageSize: 1000 });
    times.push(performance.now() - start);
    if (res.unreachable.length > 0 || res.sessions.length !== expected) {
      throw new Error(
        `list named ${res.unreachable.join(", ") || "no node"} unreachable, ${res.sessions.length} sessions`,
      );
    }
  }
  return times.sort((a, b) => a - b);
}

/**
 * The floor of a list through the Hub: the same three Nodes asked at once, directly (what the Hub
 * itself waits for before it merges); sorted ms of the slowest of each three.
 */
async function timeDirectLists(nodes: ReadonlyArray<readonly [string, string]>): Promise<number[]> {
  const clients = nodes.map(([name, url]) => ({
    name,
    sessions: createClient(
      SessionService,
      createGrpcTransport({ baseUrl: url, interceptors: [bearerInterceptor(FLEET_TOKEN)] }),
    ),
  }));
  const times: number[] = [];
  for (let i = 0; i < LIST_CALLS; i++) {
    const start = performance.now();
    await Promise.all(clients.map((c) => c.sessions.listSessions({ parent: `nodes/${c.name}`, pageSize: 1000 })));
    times.push(performance.now() - start);
  }
  return times.sort((a, b) => a - b);
}

/** Resident memory of a bare Node.js process (the runtime alone): the floor of the Hub's memory. */
async function runtimeRssMiB(): Promise<number> {
  const bare = spawn(process.execPath, ["-e", "setInterval(() => {}, 1 << 30)"], { stdio: "ignore" });
  rememberProcess(bare);
  try {
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    return await rssMiB(bare.pid as number);
  } finally {
    bare.kill();
  }
}

/**
 * One Hub and three Nodes as processes, 100 sessions on each Node: the first a fleet of stand-in
 * agents with real native logs, the others idle panes. Prints: ListSessions over the 300 sessions
 * (with a watcher open, as a dashboard keeps, and with nobody watching); a status change on a remote
 * Node to the Hub's WatchSessions event; keystroke echo through the Hub to a remote Node beside the
 * Node's own API and a direct tmux attach; the Hub's memory with 20 viewers attached through it.
 */
export async function run(): Promise<void> {
  let fleet: AgentFleet | undefined;
  const others: SleepNode[] = [];
  let hub: ServerProcess | undefined;
  const open: Path[] = [];
  const viewers: TestViewer[] = [];
  const stopWatch = new AbortController();
  const hubTmux = createTestTmux();
  try {
    const setupStarted = performance.now();
    fleet = await startAgentFleet(SESSIONS_PER_NODE, { node: "w1" });
    others.push(await startSleepNode("w2", SESSIONS_PER_NODE - 1));
    others.push(await startSleepNode("w3", SESSIONS_PER_NODE));
    const echoNode = others[0] as SleepNode;
    await echoNode.tmux.run("new-session", "-d", "-s", "echo", "-x", "120", "-y", "40", "--", ...SHELL);
    const nodes: Array<readonly [string, string]> = [
      ["w1", fleet.hub.url],
      ...others.map((n) => [n.name, n.server.url] as const),
    ];
    const loadBefore = (await readFile("/proc/loadavg", "utf8")).split(" ").slice(0, 3).join(" ");
    hub = await startServerProcess({
      kind: "hub",
      tmuxSocket: hubTmux.socketName,
      token: HUB_TOKEN,
      args: nodes.flatMap(([name, url]) => ["--node", `${name}=${url}`]),
      env: { STARAGENT_NODE_TOKEN: FLEET_TOKEN },
    });
    const hubTransport = createGrpcTransport({
      baseUrl: hub.url,
      interceptors: [bearerInterceptor(HUB_TOKEN)],
      nodeOptions: { noDelay: true } as Record<string, unknown>,
    });
    const sessions = createClient(SessionService, hubTransport);
    const total = SESSIONS_PER_NODE * 3;
    let seen = "";
    await waitFor(
      async () => {
        const res = await sessions.listSessions({ parent: "nodes/-", pageSize: 1000 });
        seen = `${res.sessions.length} sessions, unreachable: ${res.unreachable.join(", ") || "none"}`;
        return res.sessions.length === total && res.unreachable.length === 0;
      },
      "every node's sessions through the Hub",
      60_000,
      500,
    ).catch((err: Error) => {
      throw new Error(`${err.message} (last: ${seen})`);
    });
    console.log(
      `setup: ${((performance.now() - setupStarted) / 1000).toFixed(0)} s (3 Nodes × ${SESSIONS_PER_NODE} sessions)`,
    );

    // Nobody watching: each list reads tmux and the status of every session on every Node.
    const cold = await timeLists(sessions, total);

    // A dashboard open: one WatchSessions through the Hub, so every Node's watch loop runs.
    const waiters = new Set<{ name: string; matches: (s: Session) => boolean; resolve: (at: number) => void }>();
    let snapshotSeen: () => void = () => {};
    const snapshot = new Promise<void>((r) => {
      snapshotSeen = r;
    });
    const watching = (async () => {
      for await (const event of sessions.watchSessions({ parent: "nodes/-" }, { signal: stopWatch.signal })) {
        const at = performance.now();
        if (event.type === WatchEventType.SNAPSHOT) snapshotSeen();
        if (event.type !== WatchEventType.UPSERTED) continue;
        for (const s of event.sessions) {
          for (const w of waiters) {
            if (w.name === s.name && w.matches(s)) {
              waiters.delete(w);
              w.resolve(at);
            }
          }
        }
      }
    })().catch((err: unknown) => {
      if (!stopWatch.signal.aborted) throw err;
    });
    await snapshot;
    const warm = await timeLists(sessions, total);
    const direct = await timeDirectLists(nodes);

    // Status change on the remote Node → the Hub's WatchSessions event.
    const eventFor = (name: string, matches: (s: Session) => boolean) =>
      new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`no WatchSessions event for ${name} within ${EVENT_TIMEOUT_MS} ms`));
        }, EVENT_TIMEOUT_MS);
        const waiter = {
          name,
          matches,
          resolve: (at: number) => {
            clearTimeout(timer);
            resolve(at);
          },
        };
        waiters.add(waiter);
      });
    const writable = fleet.sessions.filter((s) => s.cli === "claude" || s.cli === "codex");
    const statusTimes: number[] = [];
    for (let i = 0; i < STATUS_SAMPLES / 2; i++) {
      const session = writable[Math.floor(Math.random() * writable.length)] as FleetSession;
      const log = await fleet.logOf(session);
      const records = turnRecords(session);
      const working = eventFor(session.name, (s) => s.status === SessionStatus.WORKING);
      const opened = performance.now();
      await appendFile(log, records.open);
      statusTimes.push((await working) - opened);
      await pause(TURN_MS);
      const review = eventFor(
        session.name,
        (s) => s.statusReason === StatusReason.UNSEEN_COMPLETION && s.completionId === records.completionId,
      );
      const completed = performance.now();
      await appendFile(log, records.complete);
      statusTimes.push((await review) - completed);
      await pause(GAP_MS);
    }
    statusTimes.sort((a, b) => a - b);

    // Keystroke echo: through the Hub to the remote Node, the Node's own API, and tmux directly.
    await waitFor(
      async () => (await echoNode.tmux.run("capture-pane", "-p", "-t", "=echo:")).includes("READY>"),
      "prompt",
    );
    const hubTerminal = createClient(TerminalStream, hubTransport);
    const nodeTerminal = createClient(
      TerminalStream,
      createGrpcTransport({
        baseUrl: echoNode.server.url,
        interceptors: [bearerInterceptor(FLEET_TOKEN)],
        nodeOptions: { noDelay: true } as Record<string, unknown>,
      }),
    );
    const echoName = "nodes/w2/sessions/echo";
    const echoes: Array<[string, number[]]> = [];
    for (const [label, make] of [
      ["Hub → Node: Attach + SendInput (browsers)", () => apiPath(hubTerminal, echoName)],
      ["Hub → Node: bidi Connect (scripts, `staragent attach`)", () => connectPath(hubTerminal, echoName)],
      ["Node direct: Attach + SendInput", () => apiPath(nodeTerminal, echoName)],
      ["Node direct: bidi Connect", () => connectPath(nodeTerminal, echoName)],
      ["direct node-pty tmux attach", async () => directPath(echoNode.tmux, "echo")],
    ] as const) {
      const path = await make();
      open.push(path);
      echoes.push([label, await echoLatency(path)]);
      path.close();
      open.pop();
      await waitFor(async () => (await echoNode.tmux.client.query(["list-clients"])).trim() === "", "clients to go");
    }

    // The Hub's memory: 300 sessions listed and watched, then 20 viewers attached through it.
    const hubPid = hub.process.pid as number;
    const before = await rssMiB(hubPid);
    // Ten viewers on each sleep Node, on different sessions (several per session in a small try).
    const idle = others.flatMap((n) =>
      Array.from({ length: VIEWERS / 2 }, (_, i) => {
        const index = i % (SESSIONS_PER_NODE - 1);
        return `nodes/${n.name}/sessions/${n.name}-idle-${String(index).padStart(3, "0")}`;
      }),
    );
    for (const name of idle) viewers.push(await TestViewer.attach(hubTerminal, { name, cols: 120, rows: 40 }));
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const after = await rssMiB(hubPid);
    const runtime = await runtimeRssMiB();

    console.log("| figure | p50 | p95 | max | goal |");
    console.log("|---|---|---|---|---|");
    const row = (label: string, sorted: number[], goal: string) =>
      console.log(
        `| ${label} | ${fmt(percentile(sorted, 50))} | ${fmt(percentile(sorted, 95))} | ${fmt(sorted.at(-1) ?? Number.NaN)} | ${goal} |`,
      );
    row(`ListSessions nodes/-, ${total} sessions on 3 Nodes, a watcher open (ms)`, warm, "p95 < 50");
    row(`floor: the 3 Nodes' ListSessions asked directly at once, a watcher open (ms)`, direct, "");
    row(`ListSessions nodes/-, ${total} sessions on 3 Nodes, nobody watching (ms)`, cold, "");
    row(
      `status change on a remote Node → Hub WatchSessions event, ${statusTimes.length} records (ms)`,
      statusTimes,
      "p95 < 300",
    );
    for (const [label, times] of echoes)
      row(`keystroke echo, ${label} (ms)`, times, label.startsWith("Hub") ? "p50 < 5" : "");
    console.log(
      `\nHub RSS: ${fmt(before)} MiB with 3 Nodes × ${SESSIONS_PER_NODE} sessions listed and watched; ${fmt(after)} MiB with ${VIEWERS} viewers attached through it (${fmt(((after - before) * 1024) / VIEWERS)} KiB each)`,
    );
    console.log(`floor: a bare Node.js process (the runtime alone) in the same run: ${fmt(runtime)} MiB`);
    const load = (await readFile("/proc/loadavg", "utf8")).split(" ").slice(0, 3).join(" ");
    console.log(`load average at the start: ${loadBefore}; at the end: ${load}`);
    stopWatch.abort();
    await watching;
  } finally {
    for (const p of open) p.close();
    for (const v of viewers) v.close();
    stopWatch.abort();
    await hub?.stop();
    for (const n of others) {
      await n.server.stop();
      await n.tmux.close();
    }
    await fleet?.close();
    await hubTmux.close();
  }
}
