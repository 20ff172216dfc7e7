import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const MODULE = fileURLToPath(new URL("./server-process.ts", import.meta.url));

/**
 * The largest heap (MiB) of a process that keeps about 10 MB alive while it makes garbage that lives
 * a little while (the last eight rounds' worth, as a server's requests in flight do); with `tune`,
 * after `tuneServerHeap()`.
 */
async function peakHeapMiB(tune: boolean, nodeFlags: string[] = []): Promise<number> {
  const script = `
    import { getHeapStatistics } from "node:v8";
    import { tuneServerHeap } from ${JSON.stringify(MODULE)};
    if (${tune}) tuneServerHeap();
    const live = [];
    for (let i = 0; i < 100000; i++) live.push({ n: i, s: "live-" + i });
    const inFlight = [];
    let peak = 0;
    for (let round = 0; round < 600; round++) {
      const garbage = [];
      for (let i = 0; i < 10000; i++) garbage.push({ n: i, pair: [i, i + 1], s: "garbage-" + i });
      inFlight.push(garbage);
      if (inFlight.length > 8) inFlight.shift();
      peak = Math.max(peak, getHeapStatistics().total_heap_size);
    }
    console.log(peak / 2 ** 20);
  `;
  const { stdout } = await run(process.execPath, [
    ...nodeFlags,
    "--import",
    "tsx",
    "--input-type=module",
    "-e",
    script,
  ]);
  return Number(stdout.trim());
}

/** Three child processes each making some hundreds of MB of garbage: seconds alone, far more on a loaded machine. */
const TEST_TIMEOUT_MS = 120_000;

describe("tuneServerHeap", () => {
  it(
    "collects before the heap grows far past what is alive, unless the process chose its own growth",
    async () => {
      const [untuned, tuned, ownChoice] = await Promise.all([
        peakHeapMiB(false),
        peakHeapMiB(true),
        peakHeapMiB(true, ["--heap-growing-percent=300"]),
      ]);
      expect(tuned).toBeGreaterThan(0);
      expect(tuned).toBeLessThan(untuned * 0.75);
      expect(ownChoice).toBeGreaterThan(tuned * 1.25);
    },
    TEST_TIMEOUT_MS,
  );
});
