import { execFile } from "node:child_process";
import { promisify } from "node:util";

const execFileAsync = promisify(execFile);

/** Resident memory the measuring process is brought to first (MiB of touched ballast on top of node's own). */
const BALLAST_MIB = [0, 50, 100, 150];
/** Spawns timed at each size; the figure is the median. */
const SPAWNS = 30;

/**
 * How long one `child_process.spawn` of tmux holds the event loop, against the process's resident
 * memory: why the Node and the Hub read tmux as few times as they can (one size poll a second for the
 * whole machine, docs/terminal.md) and keep their heaps small (`tuneServerHeap`). Each size is
 * measured in a fresh process, timing the synchronous part of `spawn` (fork and exec).
 */
export async function run(): Promise<void> {
  const script = `
    import { spawn } from "node:child_process";
    const ballast = [];
    for (let i = 0; i < Number(process.argv[1]); i++) ballast.push(Buffer.alloc(1 << 20, 1));
    const times = [];
    for (let i = 0; i < ${SPAWNS}; i++) {
      const start = performance.now();
      const child = spawn("tmux", ["-V"], { stdio: "ignore" });
      times.push(performance.now() - start);
      await new Promise((resolve) => child.once("exit", resolve));
    }
    times.sort((a, b) => a - b);
    console.log(JSON.stringify({ rss: process.memoryUsage().rss / 2 ** 20, p50: times[${SPAWNS >> 1}], max: times.at(-1) }));
  `;
  console.log("| resident memory (MiB) | event loop held by one tmux spawn, p50 / max (ms) |");
  console.log("|---|---|");
  for (const mib of BALLAST_MIB) {
    const { stdout } = await execFileAsync(process.execPath, ["--input-type=module", "-e", script, String(mib)]);
    const r = JSON.parse(stdout) as { rss: number; p50: number; max: number };
    console.log(`| ${r.rss.toFixed(0)} | ${r.p50.toFixed(2)} / ${r.max.toFixed(2)} |`);
  }
}
