import { readFile } from "node:fs/promises";
import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import * as pty from "node-pty";
import { type ConnectRequest, ConnectRequestSchema, TerminalStream } from "../gen/staragent/v1/terminal_stream_pb.js";
import { AsyncQueue } from "../services/common/async-queue.js";
import { bearerInterceptor } from "../services/common/bearer.js";
import { startServerProcess } from "../test/support/servers.js";
import { TestViewer } from "../test/support/test-viewer.js";
import { createTestTmux, type TestTmux } from "../test/support/tmux.js";
import { waitFor } from "../test/support/wait.js";

/** Keystrokes timed per path: enough for a stable p99. */
const KEYSTROKES = 300;
/** Ctrl-C trials per path. */
const CTRL_C_TRIALS = 5;
/** How long `yes` floods before each Ctrl-C. */
const FLOOD_MS = 1_000;
/** Idle attachments opened to measure memory per attachment. */
const IDLE_ATTACHMENTS = 16;
/** Sessions the idle attachments spread over (the per-session limit is 8). */
const IDLE_SESSIONS = 4;
export const SHELL = ["env", "PS1=READY> ", "bash", "--norc", "--noprofile"];
const NODE_TOKEN = "bench-node-token";

/** A way to type into a session and watch its output: the API or a direct node-pty `tmux attach`. */
export interface Path {
  type(data: string): void;
  /** Resolves when output received after this call contains `marker`. */
  next(marker: string): Promise<void>;
  close(): void;
}

/** The `p`th percentile of sorted samples. */
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function rssKiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
}

function watcher() {
  let buffer = "";
  let waiting: { marker: string; resolve: () => void } | undefined;
  return {
    push(text: string) {
      buffer += text;
      if (buffer.length > 65_536) buffer = buffer.slice(-4_096);
      if (waiting && buffer.includes(waiting.marker)) {
        const w = waiting;
        waiting = undefined;
        w.resolve();
      }
    },
    next(marker: string): Promise<void> {
      buffer = "";
      return new Promise((resolve) => {
        waiting = { marker, resolve };
      });
    },
  };
}

/** A viewer over the Node API as browsers use it: Attach for output, one SendInput call per keystroke. */
export async function apiPath(
  client: ReturnType<typeof createClient<typeof TerminalStream>>,
  name: string,
): Promise<Path> {
  const viewer = await TestViewer.attach(client, { name, cols: 120, rows: 40 });
  const w = watcher();
  const decoder = new TextDecoder();
  const unsubscribe = viewer.onOutput((data) => w.push(decoder.decode(data, { stream: true })));
  let sequenceQueue: Promise<unknown> = Promise.resolve();
  return {
    type: (data) => {
      sequenceQueue = sequenceQueue.then(() => viewer.type(data));
    },
    next: (marker) => w.next(marker),
    close: () => {
      unsubscribe();
      viewer.close();
    },
  };
}

/** Bytes of output a bidi viewer processes before acknowledging them (below the 16 KiB low watermark). */
const CONNECT_ACK_EVERY_BYTES = 8 * 1024;

/** The same over the bidi `Connect` stream (what the Hub and `staragent attach` use): no call per key. */
export async function connectPath(
  client: ReturnType<typeof createClient<typeof TerminalStream>>,
  name: string,
): Promise<Path> {
  const requests = new AsyncQueue<ConnectRequest>();
  const abort = new AbortController();
  const w = watcher();
  const decoder = new TextDecoder();
  let sequence = 0;
  let unacked = 0;
  requests.push(create(ConnectRequestSchema, { message: { case: "attach", value: { name, cols: 120, rows: 40 } } }));
  let attachedNow: () => void = () => {};
  let failed: (err: unknown) => void = () => {};
  const ready = new Promise<void>((resolve, reject) => {
    attachedNow = resolve;
    failed = reject;
  });
  void (async () => {
    for await (const res of client.connect(requests, { signal: abort.signal })) {
      if (res.message.case !== "event") continue;
      const event = res.message.value.event;
      if (event.case === "attached") attachedNow();
      else if (event.case === "output") {
        w.push(decoder.decode(event.value.data, { stream: true }));
        unacked += event.value.data.byteLength;
        if (unacked >= CONNECT_ACK_EVERY_BYTES) {
          unacked = 0;
          requests.push(
            create(ConnectRequestSchema, { message: { case: "ack", value: { sequence: event.value.sequence } } }),
          );
        }
      }
    }
  })().catch((err) => {
    if (!abort.signal.aborted) failed(err);
  });
  await ready;
  return {
    type: (data) => {
      sequence++;
      requests.push(
        create(ConnectRequestSchema, {
          message: { case: "input", value: { sequence, data: Buffer.from(data, "utf8") } },
        }),
      );
    },
    next: (marker) => w.next(marker),
    close: () => {
      requests.close();
      abort.abort();
    },
  };
}

/** A direct node-pty running `tmux attach-session`: the floor every API path is compared with. */
export function directPath(tmux: TestTmux, session: string): Path {
  const env = { ...tmux.client.environment, TERM: "xterm-256color" };
  const term = pty.spawn("tmux", tmux.client.argv(["attach-session", "-t", `=${session}`]), {
    cols: 120,
    rows: 40,
    env,
  });
  const w = watcher();
  const sub = term.onData((d) => w.push(d));
  return {
    type: (data) => term.write(data),
    next: (marker) => w.next(marker),
    close: () => {
      sub.dispose();
      term.kill();
    },
  };
}

/** Keystroke echo times (ms, sorted): each letter timed from typing it to seeing it in the output. */
export async function echoLatency(path: Path): Promise<number[]> {
  const times: number[] = [];
  const letters = "abcdefghijklmnopqrstuvwxyz";
  for (let i = 0; i < KEYSTROKES; i++) {
    if (i % 40 === 0) {
      const cleared = path.next("READY>");
      path.type("\x15\x0c");
      await cleared;
    }
    const ch = letters[i % letters.length] as string;
    const seen = path.next(ch);
    const start = performance.now();
    path.type(ch);
    await seen;
    times.push(performance.now() - start);
  }
  return times.sort((a, b) => a - b);
}

async function ctrlCTimes(path: Path): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < CTRL_C_TRIALS; i++) {
    path.type("yes flood-flood-flood\r");
    await new Promise((r) => setTimeout(r, FLOOD_MS));
    const prompt = path.next("READY>");
    const start = performance.now();
    path.type("\x03");
    await prompt;
    times.push(performance.now() - start);
    await new Promise((r) => setTimeout(r, 200));
  }
  return times.sort((a, b) => a - b);
}

async function tmuxClientRss(tmux: TestTmux): Promise<number> {
  const pids = (await tmux.client.query(["list-clients", "-F", "#{client_pid}"])).split("\n").filter(Boolean);
  let total = 0;
  for (const pid of pids) total += await rssKiB(Number(pid)).catch(() => 0);
  return pids.length > 0 ? total / pids.length : Number.NaN;
}

/** Keystroke echo, Ctrl-C under `yes`, and memory per idle attachment: through a Node's API and direct. */
export async function run(): Promise<void> {
  const tmux = createTestTmux();
  const node = await startServerProcess({
    kind: "node",
    tmuxSocket: tmux.socketName,
    token: NODE_TOKEN,
    args: ["--name", "bench"],
  });
  const open: Path[] = [];
  const viewers: TestViewer[] = [];
  try {
    const client = createClient(
      TerminalStream,
      createGrpcTransport({
        baseUrl: node.url,
        // Passed on to net.connect: keystrokes are small writes that Nagle's algorithm would delay.
        nodeOptions: { noDelay: true } as Record<string, unknown>,
        interceptors: [bearerInterceptor(NODE_TOKEN)],
      }),
    );
    for (const s of [
      "echo-api",
      "echo-connect",
      "echo-direct",
      ...Array.from({ length: IDLE_SESSIONS }, (_, i) => `idle-${i}`),
    ]) {
      await tmux.run("new-session", "-d", "-s", s, "-x", "120", "-y", "40", "--", ...SHELL);
    }
    await waitFor(
      async () => (await tmux.run("capture-pane", "-p", "-t", "=echo-direct:")).includes("READY>"),
      "prompt",
    );
    const rows: string[][] = [];
    const api = await apiPath(client, "nodes/bench/sessions/echo-api");
    open.push(api);
    const bidi = await connectPath(client, "nodes/bench/sessions/echo-connect");
    open.push(bidi);
    const direct = directPath(tmux, "echo-direct");
    open.push(direct);
    const apiEcho = await echoLatency(api);
    const bidiEcho = await echoLatency(bidi);
    const directEcho = await echoLatency(direct);
    rows.push([
      "keystroke echo p50 (ms)",
      fmt(percentile(apiEcho, 50)),
      fmt(percentile(bidiEcho, 50)),
      fmt(percentile(directEcho, 50)),
      "< 3",
    ]);
    rows.push([
      "keystroke echo p99 (ms)",
      fmt(percentile(apiEcho, 99)),
      fmt(percentile(bidiEcho, 99)),
      fmt(percentile(directEcho, 99)),
      "< 15",
    ]);
    const apiCtrlC = await ctrlCTimes(api);
    const bidiCtrlC = await ctrlCTimes(bidi);
    const directCtrlC = await ctrlCTimes(direct);
    rows.push([
      `Ctrl-C to prompt under yes, median of ${CTRL_C_TRIALS} (ms)`,
      fmt(percentile(apiCtrlC, 50)),
      fmt(percentile(bidiCtrlC, 50)),
      fmt(percentile(directCtrlC, 50)),
      "< 300",
    ]);
    rows.push([
      `Ctrl-C to prompt under yes, worst of ${CTRL_C_TRIALS} (ms)`,
      fmt(apiCtrlC.at(-1) ?? Number.NaN),
      fmt(bidiCtrlC.at(-1) ?? Number.NaN),
      fmt(directCtrlC.at(-1) ?? Number.NaN),
      "",
    ]);
    for (const p of open.splice(0)) p.close();
    await waitFor(async () => (await tmux.client.query(["list-clients"])).trim() === "", "clients to go");

    const pid = node.process.pid as number;
    const nodeBefore = await rssKiB(pid);
    for (let i = 0; i < IDLE_ATTACHMENTS; i++) {
      viewers.push(await TestViewer.attach(client, { name: `nodes/bench/sessions/idle-${i % IDLE_SESSIONS}` }));
    }
    await new Promise((r) => setTimeout(r, 1_000));
    const nodeAfter = await rssKiB(pid);
    const apiClient = await tmuxClientRss(tmux);
    for (const v of viewers.splice(0)) v.close();
    await waitFor(async () => (await tmux.client.query(["list-clients"])).trim() === "", "clients to go");
    const selfBefore = process.memoryUsage().rss / 1024;
    for (let i = 0; i < IDLE_ATTACHMENTS; i++) open.push(directPath(tmux, `idle-${i % IDLE_SESSIONS}`));
    await waitFor(
      async () => (await tmux.client.query(["list-clients"])).trim().split("\n").length === IDLE_ATTACHMENTS,
      "direct clients",
    );
    await new Promise((r) => setTimeout(r, 1_000));
    const selfAfter = process.memoryUsage().rss / 1024;
    const directClient = await tmuxClientRss(tmux);
    rows.push([
      "memory per idle attachment, server process (KiB)",
      fmt((nodeAfter - nodeBefore) / IDLE_ATTACHMENTS),
      "(same)",
      fmt((selfAfter - selfBefore) / IDLE_ATTACHMENTS),
      "",
    ]);
    rows.push([
      "memory per idle attachment, its tmux client process (KiB RSS)",
      fmt(apiClient),
      "(same)",
      fmt(directClient),
      "",
    ]);
    console.log(
      "| figure | Node API: Attach + SendInput calls (browsers) | Node API: bidi Connect (Hub, scripts) | direct node-pty tmux attach | goal |",
    );
    console.log("|---|---|---|---|---|");
    for (const r of rows) console.log(`| ${r.join(" | ")} |`);
  } finally {
    for (const p of open) p.close();
    for (const v of viewers) v.close();
    await node.stop();
    await tmux.close();
  }
}

function fmt(n: number): string {
  return n >= 100 ? n.toFixed(0) : n.toFixed(2);
}
