import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { SessionService } from "../gen/staragent/v1/session_service_pb.js";
import { bearerInterceptor } from "../services/common/bearer.js";
import { runCli, type ServerProcess, STARAGENT_BIN, startServerProcess } from "../test/support/servers.js";
import { createTestTmux } from "../test/support/tmux.js";

/** Runs per command: the figure is the median, as the goals say. */
const RUNS = 10;
/** Hub starts timed: each one is a whole process start, so fewer than the short commands. */
const HUB_STARTS = 5;
/** How long the Hub is left alone before its resident memory is read (its first watch passes done). */
const IDLE_SETTLE_MS = 3_000;
const TOKEN = "bench-startup-token";

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? Number.NaN) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/** Wall time of one `node args` run to its exit, in ms; fails on a non-zero exit. */
function timeRun(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(process.execPath, args, { env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    child.once("error", reject);
    child.once("exit", (code) => {
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      if (code === 0) resolve(ms);
      else reject(new Error(`node ${args.join(" ")} exited with ${code}: ${stderr}`));
    });
  });
}

/**
 * Runs each command once per round, `RUNS` rounds, so that every figure, bare node's included, is taken
 * under the same conditions on a machine shared with other work.
 */
async function timeInterleaved(measures: (() => Promise<number>)[]): Promise<number[][]> {
  const times = measures.map((): number[] => []);
  for (let i = 0; i < RUNS; i++) {
    for (const [j, measure] of measures.entries()) times[j]?.push(await measure());
  }
  return times;
}

/** Wall time of one call, in ms. */
async function timeCall(call: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await call();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]) / 1024;
}

function row(what: string, ms: number[], bare: number, goal: string): string {
  const m = median(ms);
  return `| ${what} | ${m.toFixed(1)} | ${Math.min(...ms).toFixed(1)} | ${Math.max(...ms).toFixed(1)} | ${(m / bare).toFixed(2)}× | ${goal} |`;
}

/**
 * How fast the `staragent` command answers and how light the Hub is: wall time (median of 10) of
 * `staragent --help` and of `staragent ls` against a running Hub, beside a bare `node -e 0` run in the
 * same rounds; the Hub's start to listening (median of 5 starts) and its resident memory when idle.
 */
export async function run(): Promise<void> {
  const tmux = createTestTmux();
  const cwd = await mkdtemp(join(tmpdir(), "sa-bench-startup-"));
  const hubs: ServerProcess[] = [];
  try {
    console.log(`bin: ${STARAGENT_BIN}`);
    const starts: number[] = [];
    for (let i = 0; i < HUB_STARTS; i++) {
      const begin = process.hrtime.bigint();
      const hub = await startServerProcess({ kind: "hub", tmuxSocket: tmux.socketName, token: TOKEN });
      starts.push(Number(process.hrtime.bigint() - begin) / 1e6);
      hubs.push(hub);
      if (i < HUB_STARTS - 1) await hubs.pop()?.stop();
    }
    const hub = hubs[0];
    if (!hub) throw new Error("no Hub started");
    const env = { ...process.env, STARAGENT_URL: hub.url, STARAGENT_AUTH_TOKEN: TOKEN, STARAGENT_HOME: hub.home };
    const created = await runCli(["new", "bench", "--cwd", cwd, "--", "sh"], env);
    if (created.code !== 0) throw new Error(`staragent new failed: ${created.stderr}`);
    // The call `ls` makes, from a client that is already connected: the Hub's share of `ls`.
    const client = createClient(
      SessionService,
      createGrpcTransport({ baseUrl: hub.url, interceptors: [bearerInterceptor(TOKEN)] }),
    );
    await client.listSessions({ parent: "nodes/-" });
    const [bareTimes = [], help = [], ls = [], call = []] = await timeInterleaved([
      () => timeRun(["-e", "0"], process.env),
      () => timeRun([STARAGENT_BIN, "--help"], process.env),
      () => timeRun([STARAGENT_BIN, "ls"], env),
      () => timeCall(() => client.listSessions({ parent: "nodes/-", pageSize: 1000 })),
    ]);
    const bare = median(bareTimes);
    await new Promise((r) => setTimeout(r, IDLE_SETTLE_MS));
    const pid = hub.process.pid;
    if (pid === undefined) throw new Error("the Hub has no pid");
    const rss = await rssMiB(pid);

    console.log(`\n| command (wall ms, ${RUNS} rounds, interleaved) | median | min | max | × bare node | goal |`);
    console.log("|---|---|---|---|---|---|");
    console.log(row("node -e 0", bareTimes, bare, ""));
    console.log(row("staragent --help", help, bare, "< 3× and < 250 ms"));
    console.log(row("staragent ls (Hub with 1 session)", ls, bare, "< 3× and < 250 ms"));
    console.log(row("its ListSessions call from a connected client", call, bare, ""));
    console.log(`\n| Hub | figure | goal |`);
    console.log("|---|---|---|");
    console.log(
      `| start to listening, median of ${HUB_STARTS} (ms) | ${median(starts).toFixed(1)} (min ${Math.min(...starts).toFixed(1)}, max ${Math.max(...starts).toFixed(1)}) | < 500 |`,
    );
    console.log(
      `| idle RSS, ${IDLE_SETTLE_MS / 1000} s after 10 ls calls, 1 session (MiB) | ${rss.toFixed(1)} | < 80 |`,
    );
  } finally {
    for (const h of hubs) await h.stop();
    await tmux.close();
    await rm(cwd, { recursive: true, force: true });
  }
}
