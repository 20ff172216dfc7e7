import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, readlink, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { type Client, createClient } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import * as pty from "node-pty";
import { Connectivity, NodeService } from "../gen/staragent/v1/node_service_pb.js";
import { SessionService } from "../gen/staragent/v1/session_service_pb.js";
import { TerminalStream } from "../gen/staragent/v1/terminal_stream_pb.js";
import { bearerInterceptor } from "../services/common/bearer.js";
import { NEXT_COMMAND, type TmuxArgument } from "../services/node/tmux/client.js";
import { exitOnSignals, rememberProcess } from "../test/support/leftovers.js";
import { type ServerProcess, startServerProcess } from "../test/support/servers.js";
import { TestViewer } from "../test/support/test-viewer.js";
import { createTestTmux, type TestTmux } from "../test/support/tmux.js";
import { waitFor } from "../test/support/wait.js";

/**
 * `make load`: one Hub and three Nodes as separate processes on loopback, each Node with 300 tmux
 * sessions on its own private tmux server; 20 viewers stream through the Hub (10 type and time
 * each keystroke's echo, 10 follow sessions that print all the time), chat messages are sent, and
 * session and node watches and lists run, for LOAD_SECONDS. Then it checks what must hold exactly
 * (every typed and chatted byte arrived once and in order, no errors, nothing left behind: tmux
 * clients, ptys, file descriptors) and exits 1 if anything does not. Memory and echo latency are
 * printed, not asserted (docs/benchmarks.md records them). LOAD_SECONDS and LOAD_SESSIONS change
 * the duration and the sessions per Node; LOAD_HUB_NODE_OPTIONS is passed to the Hub as NODE_OPTIONS
 * (e.g. `--max-old-space-size=48`, to see how much of its memory is collectable).
 *
 * Each goal's figure is printed beside its floor, measured in the same run under the same load: the
 * echo of one more typist on a direct `tmux attach` (no StarAgent in the path), each list beside the
 * same lists asked of the three Nodes directly (no Hub), and the Hub's memory beside a bare Node.js
 * process's (the runtime alone). What the floor already misses, no change to StarAgent can meet.
 */

/** How long the load runs (seconds); LOAD_SECONDS overrides it. */
const LOAD_SECONDS = Number(process.env.LOAD_SECONDS ?? 60);
const NODE_COUNT = 3;
/** Sessions per Node, most of them idle `sleep` panes; LOAD_SESSIONS overrides it. */
const SESSIONS_PER_NODE = Number(process.env.LOAD_SESSIONS ?? 300);
/** Viewers that type one key at a time and time its echo. */
const TYPING_VIEWERS = 10;
/** Viewers of sessions printing a line every 100 ms. */
const BUSY_VIEWERS = 10;
/** One chat message to one of the chat sessions this often. */
const CHAT_EVERY_MS = 300;
/** WatchSessions streams over every node. */
const SESSION_WATCHERS = 5;
/** A full ListSessions over every node this often. */
const LIST_EVERY_MS = 2_000;
/** Keys typed before Enter ends a line. */
const LINE_LENGTH = 40;
/** Pause between a key's echo and the next key: a fast typist (20 to 40 keys a second). */
const THINK_MS = { min: 10, max: 40 } as const;
/** How long a key's echo may take before it counts as lost. */
const ECHO_TIMEOUT_MS = 5_000;
/** How long the servers may take to let go of everything once the load stops. */
const SETTLE_MS = 30_000;
/**
 * Keys typed: lowercase letters that are never the final byte of the escape sequences tmux draws
 * with (m, h, l, r, d are), so the key itself shows its echo.
 */
const KEYS = "abcefgijknopqstuvwxyz";
const NODE_TOKEN = "load-node-token-load-node-token";
const USER_TOKEN = "load-user-token-load-user-token";

interface LoadNode {
  readonly name: string;
  readonly tmux: TestTmux;
  readonly typing: string[];
  /** A `cat` session typed into through a direct `tmux attach`: the echo's floor (on the first Node). */
  floor?: string;
  readonly busy: string[];
  readonly chat: string;
  server: ServerProcess | undefined;
}

/** What one server process holds, for the leak check. */
interface Holdings {
  readonly fds: number;
  readonly ptys: number;
}

async function holdings(pid: number): Promise<Holdings> {
  const fds = await readdir(`/proc/${pid}/fd`);
  let ptys = 0;
  for (const fd of fds) {
    if ((await readlink(`/proc/${pid}/fd/${fd}`).catch(() => "")) === "/dev/ptmx") ptys++;
  }
  return { fds: fds.length, ptys };
}

/** CPU time (user + system) a process has used, in seconds. */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime are fields 14 and 15 of stat, 12 and 13 after the command name.
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

/** The kernel's clock ticks per second for /proc CPU times (USER_HZ, 100 on Linux). */
const CLOCK_TICKS_PER_SECOND = 100;

async function loadAverage(): Promise<string> {
  return (await readFile("/proc/loadavg", "utf8")).split(" ").slice(0, 3).join(" ");
}

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]) / 1024;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

function randomKey(): string {
  return KEYS[Math.floor(Math.random() * KEYS.length)] as string;
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Creates `SESSIONS_PER_NODE` sessions on a Node's tmux in a few tmux calls (`;` chains commands). */
async function createSessions(node: LoadNode, dir: string): Promise<void> {
  const commands: string[][] = [];
  for (const name of [...node.typing, ...(node.floor ? [node.floor] : [])])
    commands.push([name, `cat > ${join(dir, `${name}.typed`)}`]);
  for (const name of node.busy) {
    commands.push([
      name,
      // One process printing every 100 ms (a shell loop would fork `sleep` ten times a second).
      "perl -e '$| = 1; for ($i = 1; ; $i++) { print \"busy line $i padding-padding-padding-padding\\n\"; select(undef, undef, undef, 0.1) }'",
    ]);
  }
  commands.push([node.chat, `cat > ${join(dir, `${node.chat}.chat`)}`]);
  for (let i = commands.length; i < SESSIONS_PER_NODE; i++) {
    commands.push([`${node.name}-idle-${String(i).padStart(3, "0")}`, "sleep 86400"]);
  }
  const CHUNK = 50;
  for (let i = 0; i < commands.length; i += CHUNK) {
    const args: TmuxArgument[] = [];
    for (const [name, command] of commands.slice(i, i + CHUNK)) {
      if (args.length > 0) args.push(NEXT_COMMAND);
      args.push("new-session", "-d", "-s", name as string, "-x", "100", "-y", "30", command as string);
    }
    await node.tmux.client.run(args);
  }
}

/** What a Typist types through: a viewer through the Hub, or a direct `tmux attach` (the floor). */
interface Keyboard {
  type(data: string): Promise<unknown>;
  onOutput(listener: (data: Uint8Array) => void): void;
  readonly error: unknown;
  close(): void;
}

/** A node-pty running `tmux attach-session` on a Node's tmux server: typing with no StarAgent in the path. */
function directKeyboard(tmux: TestTmux, session: string): Keyboard {
  const term = pty.spawn("tmux", tmux.client.argv(["attach-session", "-t", `=${session}`]), {
    cols: 100,
    rows: 30,
    env: { ...tmux.client.environment, TERM: "xterm-256color" },
  });
  const encoder = new TextEncoder();
  return {
    type: async (data) => {
      term.write(data);
    },
    onOutput: (listener) => {
      term.onData((d) => listener(encoder.encode(d)));
    },
    error: undefined,
    close: () => term.kill(),
  };
}

/** A typing viewer: types keys one at a time into `cat`, timing each echo; what it typed, exactly. */
class Typist {
  readonly echoMs: number[] = [];
  typed = "";
  echoTimeouts = 0;
  error: unknown;
  private buffer = "";
  private waiting: { key: string; resolve: () => void } | undefined;

  constructor(
    readonly session: string,
    private readonly viewer: Keyboard,
  ) {
    const decoder = new TextDecoder();
    viewer.onOutput((data) => {
      this.buffer += decoder.decode(data, { stream: true });
      if (this.buffer.length > 65_536) this.buffer = this.buffer.slice(-4_096);
      if (this.waiting && this.buffer.includes(this.waiting.key)) {
        const w = this.waiting;
        this.waiting = undefined;
        w.resolve();
      }
    });
  }

  static async start(client: Client<typeof TerminalStream>, session: string): Promise<Typist> {
    return new Typist(session, await TestViewer.attach(client, { name: session, cols: 100, rows: 30 }));
  }

  /** Types until `stop` aborts, then ends the line and the input (EOF), so `cat` writes everything. */
  async run(stop: AbortSignal): Promise<void> {
    try {
      let column = 0;
      while (!stop.aborted) {
        if (column === LINE_LENGTH) {
          await this.viewer.type("\r");
          this.typed += "\n";
          column = 0;
          continue;
        }
        const key = randomKey();
        this.buffer = "";
        const seen = new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => {
            this.waiting = undefined;
            resolve(false);
          }, ECHO_TIMEOUT_MS);
          this.waiting = {
            key,
            resolve: () => {
              clearTimeout(timer);
              resolve(true);
            },
          };
        });
        const start = performance.now();
        const typed = this.viewer.type(key).then(
          () => undefined,
          (err: unknown) => err,
        );
        this.typed += key;
        column++;
        const echoed = await seen;
        const failed = await typed;
        if (failed !== undefined) throw failed;
        if (echoed) this.echoMs.push(performance.now() - start);
        else this.echoTimeouts++;
        await pause(THINK_MS.min + Math.random() * (THINK_MS.max - THINK_MS.min));
      }
      if (column > 0) {
        await this.viewer.type("\r");
        this.typed += "\n";
      }
      await this.viewer.type("\x04");
    } catch (err) {
      this.error = err;
    }
  }

  get viewerError(): unknown {
    return this.viewer.error;
  }

  close(): void {
    this.viewer.close();
  }
}

async function main(): Promise<number> {
  const scratch = await realpath(await mkdtemp(join(tmpdir(), "sa-load-")));
  const nodes: LoadNode[] = [];
  const hubTmux = createTestTmux();
  let hub: ServerProcess | undefined;
  let runtime: ChildProcess | undefined;
  const managers: Http2SessionManager[] = [];
  const failures: string[] = [];
  try {
    console.log(
      `make load · ${new Date().toISOString()} · ${NODE_COUNT} Nodes × ${SESSIONS_PER_NODE} sessions · ` +
        `${TYPING_VIEWERS + BUSY_VIEWERS} viewers · ${LOAD_SECONDS} s`,
    );
    for (let n = 0; n < NODE_COUNT; n++) {
      const name = `n${n + 1}`;
      nodes.push({ name, tmux: createTestTmux(), typing: [], busy: [], chat: `${name}-chat`, server: undefined });
    }
    for (let i = 0; i < TYPING_VIEWERS; i++) {
      const node = nodes[i % NODE_COUNT] as LoadNode;
      node.typing.push(`${node.name}-typing-${i}`);
    }
    for (let i = 0; i < BUSY_VIEWERS; i++) {
      const node = nodes[(i + 1) % NODE_COUNT] as LoadNode;
      node.busy.push(`${node.name}-busy-${i}`);
    }
    (nodes[0] as LoadNode).floor = "n1-floor";
    const setupStart = performance.now();
    for (const node of nodes) {
      await createSessions(node, scratch);
      node.server = await startServerProcess({
        kind: "node",
        tmuxSocket: node.tmux.socketName,
        token: NODE_TOKEN,
        args: ["--name", node.name],
      });
    }
    hub = await startServerProcess({
      kind: "hub",
      tmuxSocket: hubTmux.socketName,
      token: USER_TOKEN,
      args: nodes.flatMap((n) => ["--node", `${n.name}=${n.server?.url}`]),
      env: { STARAGENT_NODE_TOKEN: NODE_TOKEN, NODE_OPTIONS: process.env.LOAD_HUB_NODE_OPTIONS ?? "" },
    });
    const hubUrl = hub.url;
    // The runtime alone: a Node.js process that loaded nothing, sampled like the servers.
    runtime = spawn(process.execPath, ["-e", "setInterval(() => {}, 1 << 30)"], { stdio: "ignore" });
    rememberProcess(runtime);
    const clientOf = () => {
      const manager = new Http2SessionManager(hubUrl);
      managers.push(manager);
      const transport = createGrpcTransport({
        baseUrl: hubUrl,
        sessionManager: manager,
        interceptors: [bearerInterceptor(USER_TOKEN)],
      });
      return {
        sessions: createClient(SessionService, transport),
        nodes: createClient(NodeService, transport),
        terminal: createClient(TerminalStream, transport),
      };
    };

    // Setup checks on a connection of their own, closed before the baseline is taken.
    const setup = clientOf();
    await waitFor(
      async () => (await setup.nodes.listNodes({})).nodes.every((n) => n.connectivity === Connectivity.ONLINE),
      "every Node ONLINE",
      30_000,
    );
    await waitFor(
      async () => (await listAll(setup.sessions)).total === NODE_COUNT * SESSIONS_PER_NODE,
      "every session listed",
      60_000,
    );
    managers.pop()?.abort();
    console.log(`setup: ${((performance.now() - setupStart) / 1000).toFixed(1)} s`);
    const pids = {
      hub: hub.process.pid as number,
      runtime: runtime.pid as number,
      ...Object.fromEntries(nodes.map((n) => [n.name, n.server?.process.pid as number])),
    };
    await pause(1_000);
    const baseline: Record<string, Holdings> = {};
    for (const [name, pid] of Object.entries(pids)) baseline[name] = await holdings(pid);
    const hubRssBefore = await rssMiB(pids.hub);

    const rss: Record<string, number[]> = Object.fromEntries(Object.keys(pids).map((k) => [k, []]));
    const sampler = setInterval(() => {
      for (const [name, pid] of Object.entries(pids)) {
        void rssMiB(pid).then(
          (mib) => rss[name]?.push(mib),
          () => undefined,
        );
      }
    }, 1_000);

    // Watches, lists and chat stop first; typing stops after them (its end-of-input ends the typing
    // sessions, which lists would otherwise see go).
    const stop = new AbortController();
    const stopTyping = new AbortController();
    const streamErrors: string[] = [];
    const counts = { watchEvents: 0, nodeEvents: 0, notOnline: 0, lists: 0, slowLists: 0, chats: 0 };

    // Watches and lists.
    const watchers: Array<Promise<void>> = [];
    for (let i = 0; i < SESSION_WATCHERS; i++) {
      const c = clientOf();
      watchers.push(
        (async () => {
          for await (const _ of c.sessions.watchSessions({ parent: "nodes/-" }, { signal: stop.signal })) {
            counts.watchEvents++;
          }
        })().catch((err) => {
          if (!stop.signal.aborted) streamErrors.push(`WatchSessions: ${(err as Error).message}`);
        }),
      );
    }
    const nodeWatchClient = clientOf();
    watchers.push(
      (async () => {
        for await (const e of nodeWatchClient.nodes.watchNodes({}, { signal: stop.signal })) {
          counts.nodeEvents++;
          if (e.nodes.some((n) => n.connectivity !== Connectivity.ONLINE)) counts.notOnline++;
        }
      })().catch((err) => {
        if (!stop.signal.aborted) streamErrors.push(`WatchNodes: ${(err as Error).message}`);
      }),
    );
    const lister = clientOf();
    const listMs: number[] = [];
    const listing = (async () => {
      while (!stop.signal.aborted) {
        const started = performance.now();
        const { total, unreachable } = await listAll(lister.sessions);
        listMs.push(performance.now() - started);
        counts.lists++;
        // A Node too busy to answer within the Hub's 5 s is listed as unreachable: slow, not wrong.
        if (unreachable.length > 0) counts.slowLists++;
        else if (total !== NODE_COUNT * SESSIONS_PER_NODE) {
          streamErrors.push(`ListSessions: ${total} sessions instead of ${NODE_COUNT * SESSIONS_PER_NODE}`);
        }
        await pause(LIST_EVERY_MS);
      }
    })().catch((err) => {
      streamErrors.push(`ListSessions: ${(err as Error).message}`);
    });

    // The lists' floor: the same lists asked of the three Nodes at once, directly (no Hub).
    const nodeListers = nodes.map((n) => {
      const manager = new Http2SessionManager(n.server?.url as string);
      managers.push(manager);
      const transport = createGrpcTransport({
        baseUrl: n.server?.url as string,
        sessionManager: manager,
        interceptors: [bearerInterceptor(NODE_TOKEN)],
      });
      return { name: n.name, sessions: createClient(SessionService, transport) };
    });
    const directListMs: number[] = [];
    const directListing = (async () => {
      await pause(LIST_EVERY_MS / 2);
      while (!stop.signal.aborted) {
        const started = performance.now();
        await Promise.all(
          nodeListers.map((l) => l.sessions.listSessions({ parent: `nodes/${l.name}`, pageSize: 1000 })),
        );
        directListMs.push(performance.now() - started);
        await pause(LIST_EVERY_MS);
      }
    })().catch((err) => {
      streamErrors.push(`ListSessions on a Node directly: ${(err as Error).message}`);
    });

    // Chat.
    const chatClient = clientOf();
    const chatSent = new Map<string, string[]>(nodes.map((n) => [n.chat, []]));
    const chatting = (async () => {
      let i = 0;
      while (!stop.signal.aborted) {
        const node = nodes[i % NODE_COUNT] as LoadNode;
        const text = `chat-${i}-${Array.from({ length: 12 }, randomKey).join("")}`;
        i++;
        await chatClient.sessions.sendChatMessage({ name: `nodes/${node.name}/sessions/${node.chat}`, text });
        chatSent.get(node.chat)?.push(text);
        counts.chats++;
        await pause(CHAT_EVERY_MS);
      }
    })().catch((err) => {
      streamErrors.push(`SendChatMessage: ${(err as Error).message}`);
    });

    // Viewers: each on a connection of its own, as each browser has.
    const busy: TestViewer[] = [];
    for (const node of nodes) {
      for (const session of node.busy) {
        busy.push(await TestViewer.attach(clientOf().terminal, { name: `nodes/${node.name}/sessions/${session}` }));
      }
    }
    const typists: Typist[] = [];
    for (const node of nodes) {
      for (const session of node.typing) {
        typists.push(await Typist.start(clientOf().terminal, `nodes/${node.name}/sessions/${session}`));
      }
    }
    const first = nodes[0] as LoadNode;
    const floorTypist = new Typist(
      `nodes/${first.name}/sessions/${first.floor}`,
      directKeyboard(first.tmux, first.floor as string),
    );
    typists.push(floorTypist);
    const busyBytesBefore = busy.map((v) => v.totalBytes);
    const cpuBefore: Record<string, number> = {};
    for (const [name, pid] of Object.entries(pids)) cpuBefore[name] = await cpuSeconds(pid);
    const loadBefore = await loadAverage();
    const loadStart = performance.now();
    const driverCpuBefore = process.cpuUsage();
    const driverLag = monitorEventLoopDelay({ resolution: 10 });
    driverLag.enable();
    const typing = typists.map((t) => t.run(stopTyping.signal));
    console.log(`load running for ${LOAD_SECONDS} s...`);
    await pause(LOAD_SECONDS * 1_000);
    const cpuPercent: Record<string, number> = {};
    const elapsed = (performance.now() - loadStart) / 1000;
    for (const [name, pid] of Object.entries(pids)) {
      cpuPercent[name] = (((await cpuSeconds(pid)) - (cpuBefore[name] ?? 0)) / elapsed) * 100;
    }
    const loadAfter = await loadAverage();
    driverLag.disable();
    const driverCpu = process.cpuUsage(driverCpuBefore);
    const driverCpuPercent = ((driverCpu.user + driverCpu.system) / 1e6 / elapsed) * 100;
    stop.abort();
    await Promise.all([listing, directListing, chatting, ...watchers]);
    stopTyping.abort();
    await Promise.all(typing);
    clearInterval(sampler);
    const busyBytes = busy.reduce((sum, v, i) => sum + v.totalBytes - (busyBytesBefore[i] ?? 0), 0);

    // Exact bytes: what each `cat` wrote is what was typed or chatted, once and in order.
    for (const node of nodes) {
      for (const session of [...node.typing, ...(node.floor ? [node.floor] : [])]) {
        const typist = typists.find((t) => t.session.endsWith(`/${session}`)) as Typist;
        const file = join(scratch, `${session}.typed`);
        const ok = await waitFor(
          async () => (await readFile(file, "utf8")) === typist.typed,
          `${session}'s typed bytes`,
          10_000,
        ).catch(() => false);
        if (!ok) {
          const got = await readFile(file, "utf8").catch(() => "");
          failures.push(`typed input of ${session}: sent ${typist.typed.length} bytes, ${session} got ${got.length}`);
        }
      }
      const sent = `${(chatSent.get(node.chat) ?? []).join("\n")}\n`;
      const chatFile = join(scratch, `${node.chat}.chat`);
      const ok = await waitFor(
        async () => (await readFile(chatFile, "utf8")) === sent,
        `${node.chat}'s chat bytes`,
        10_000,
      ).catch(() => false);
      if (!ok) failures.push(`chat input of ${node.chat}: the session's bytes differ from the messages sent`);
    }
    for (const t of typists) {
      if (t.error) failures.push(`typing into ${t.session}: ${(t.error as Error).message}`);
    }
    for (const v of busy) if (v.error) failures.push(`viewer: ${(v.error as Error).message}`);
    failures.push(...streamErrors);

    // Everyone goes away; the servers must let go of everything.
    for (const v of busy) v.close();
    for (const t of typists) t.close();
    for (const m of managers.splice(0)) m.abort();
    const leaks = await settle(nodes, hubTmux, pids, baseline);
    failures.push(...leaks);
    for (const [name, server] of [["hub", hub] as const, ...nodes.map((n) => [n.name, n.server] as const)]) {
      const lines = (server?.stderr() ?? "").split("\n");
      const errors = lines.filter((l) => / ERROR /.test(l));
      if (errors.length > 0) failures.push(`${name} logged ${errors.length} errors, first: ${errors[0]}`);
      const warnings = lines.filter((l) => / WARN /.test(l));
      if (warnings.length > 0)
        console.log(`${name} warned ${warnings.length} times:\n  ${warnings.slice(0, 5).join("\n  ")}`);
    }

    const echo = typists
      .filter((t) => t !== floorTypist)
      .flatMap((t) => t.echoMs)
      .sort((a, b) => a - b);
    const floorEcho = [...floorTypist.echoMs].sort((a, b) => a - b);
    const sortedLists = [...listMs].sort((a, b) => a - b);
    const sortedDirectLists = [...directListMs].sort((a, b) => a - b);
    const peak = (name: string) => Math.max(...(rss[name] ?? [Number.NaN]));
    console.log("");
    console.log("| figure | value | goal |");
    console.log("|---|---|---|");
    console.log(`| load average before / at the end of the load | ${loadBefore} / ${loadAfter} | |`);
    console.log(`| Hub RSS before the load, Nodes listed (MiB) | ${hubRssBefore.toFixed(1)} | |`);
    console.log(`| Hub RSS, peak (MiB) | ${peak("hub").toFixed(1)} | < 150 |`);
    console.log(`| floor: a bare Node.js process's RSS, peak (MiB) | ${peak("runtime").toFixed(1)} | |`);
    console.log(`| Hub RSS, at the end of the load (MiB) | ${(rss.hub?.at(-1) ?? Number.NaN).toFixed(1)} | |`);
    for (const node of nodes) console.log(`| Node ${node.name} RSS, peak (MiB) | ${peak(node.name).toFixed(1)} | |`);
    console.log(`| Hub CPU (% of one core) | ${cpuPercent.hub?.toFixed(1)} | |`);
    console.log(
      `| load driver CPU (% of one core) / its event loop delay p99 (ms) | ${driverCpuPercent.toFixed(1)} / ${(driverLag.percentile(99) / 1e6).toFixed(1)} | |`,
    );
    for (const node of nodes) {
      console.log(`| Node ${node.name} CPU (% of one core) | ${cpuPercent[node.name]?.toFixed(1)} | |`);
    }
    console.log(`| keystrokes timed | ${echo.length} | |`);
    console.log(`| keystroke echo p50 (ms) | ${percentile(echo, 50).toFixed(2)} | |`);
    console.log(`| keystroke echo p99 (ms) | ${percentile(echo, 99).toFixed(2)} | < 20 |`);
    console.log(`| keystroke echo max (ms) | ${(echo.at(-1) ?? Number.NaN).toFixed(2)} | |`);
    console.log(
      `| floor: echo on a direct tmux attach, same load, p50 / p99 / max (ms), ${floorEcho.length} keys | ${percentile(floorEcho, 50).toFixed(2)} / ${percentile(floorEcho, 99).toFixed(2)} / ${(floorEcho.at(-1) ?? Number.NaN).toFixed(2)} | |`,
    );
    const late = typists.reduce((sum, t) => sum + t.echoTimeouts, 0);
    console.log(`| keystrokes whose echo took over ${ECHO_TIMEOUT_MS / 1000} s (not timed) | ${late} | 0 |`);
    console.log(`| output to busy viewers (MiB) | ${(busyBytes / 1024 / 1024).toFixed(1)} | |`);
    console.log(`| chat messages sent | ${counts.chats} | |`);
    console.log(`| full lists (${NODE_COUNT * SESSIONS_PER_NODE} sessions each) | ${counts.lists} | |`);
    console.log(
      `| full list through the Hub p50 / p95 / max (ms) | ${percentile(sortedLists, 50).toFixed(1)} / ${percentile(sortedLists, 95).toFixed(1)} / ${(sortedLists.at(-1) ?? Number.NaN).toFixed(1)} | |`,
    );
    console.log(
      `| floor: the three Nodes listed directly at once, p50 / p95 / max (ms), ${sortedDirectLists.length} lists | ${percentile(sortedDirectLists, 50).toFixed(1)} / ${percentile(sortedDirectLists, 95).toFixed(1)} / ${(sortedDirectLists.at(-1) ?? Number.NaN).toFixed(1)} | |`,
    );
    console.log(`| lists that named a Node unreachable (too slow for 5 s) | ${counts.slowLists} | 0 |`);
    console.log(`| WatchNodes events with a Node not ONLINE | ${counts.notOnline} | 0 |`);
    console.log(`| WatchSessions events (${SESSION_WATCHERS} streams) | ${counts.watchEvents} | |`);
    console.log(
      `| typed bytes lost or duplicated | ${failures.filter((f) => f.includes("input of")).length === 0 ? "none" : "SOME"} | none |`,
    );
    console.log(`| errors | ${failures.filter((f) => !f.includes("input of") && !f.startsWith("leak")).length} | 0 |`);
    console.log(`| leaked fds, ptys, tmux clients | ${leaks.length === 0 ? "none" : leaks.join("; ")} | none |`);
    if (failures.length > 0) {
      console.log("\nFAILED:");
      for (const f of failures) console.log(`- ${f}`);
      return 1;
    }
    console.log("\nall correctness checks passed");
    return 0;
  } catch (err) {
    console.log(`\nFAILED: the load stopped early: ${err instanceof Error ? err.message : String(err)}`);
    for (const f of failures) console.log(`- ${f}`);
    return 1;
  } finally {
    for (const m of managers) m.abort();
    runtime?.kill();
    await hub?.stop();
    for (const node of nodes) {
      await node.server?.stop();
      await node.tmux.close();
    }
    await hubTmux.close();
    await rm(scratch, { recursive: true, force: true });
  }
}

/** Every session over every node (all pages): how many, and which nodes were unreachable. */
async function listAll(sessions: Client<typeof SessionService>): Promise<{ total: number; unreachable: string[] }> {
  let total = 0;
  let pageToken = "";
  const unreachable = new Set<string>();
  do {
    const res = await sessions.listSessions({ parent: "nodes/-", pageSize: 1000, pageToken });
    total += res.sessions.length;
    for (const u of res.unreachable) unreachable.add(u);
    pageToken = res.nextPageToken;
  } while (pageToken !== "");
  return { total, unreachable: [...unreachable] };
}

/**
 * Waits until every tmux client is gone and every server is back to its file descriptors and ptys of
 * before the load; returns what is still held after SETTLE_MS.
 */
async function settle(
  nodes: LoadNode[],
  hubTmux: TestTmux,
  pids: Record<string, number>,
  baseline: Record<string, Holdings>,
): Promise<string[]> {
  const check = async (): Promise<string[]> => {
    const left: string[] = [];
    for (const tmux of [hubTmux, ...nodes.map((n) => n.tmux)]) {
      const clients = (await tmux.run("list-clients", "-F", "#{client_pid}").catch(() => ""))
        .split("\n")
        .filter(Boolean).length;
      if (clients > 0) left.push(`leak: ${clients} tmux clients on ${tmux.socketName}`);
    }
    for (const [name, pid] of Object.entries(pids)) {
      const now = await holdings(pid);
      const before = baseline[name] as Holdings;
      if (now.ptys > before.ptys) left.push(`leak: ${name} holds ${now.ptys - before.ptys} more ptys`);
      if (now.fds > before.fds) left.push(`leak: ${name} holds ${now.fds - before.fds} more file descriptors`);
    }
    return left;
  };
  let left: string[] = [];
  await waitFor(
    async () => {
      left = await check();
      return left.length === 0;
    },
    "the servers to let go",
    SETTLE_MS,
    250,
  ).catch(() => undefined);
  return left;
}

exitOnSignals();
process.exitCode = await main();
