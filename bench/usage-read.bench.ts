import { appendFile, mkdtemp, open, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { claudeUsage, claudeUsageReducer } from "../services/node/agents/claude/usage.js";
import { codexUsage, codexUsageReducer } from "../services/node/agents/codex/usage.js";
import { RecentUsageFollower } from "../services/node/agents/usage/recent-follower.js";
import { TotalsFollower } from "../services/node/agents/usage/totals-follower.js";

/** Log sizes measured (the goal: reading usage of 1 GB costs the same as of 1 MB, ratio under 2). */
const SIZES: readonly [string, number][] = [
  ["1 MB", 1024 ** 2],
  ["1 GB", 1024 ** 3],
];
/** Reads per size and case. */
const ITERATIONS = 200;
/** Claude Code first reads per size (each after forgetting the log). */
const FIRST_READS = 5;
const FIXTURES = join(import.meta.dirname, "../services/node/agents");

function p50(times: number[]): number {
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] ?? 0;
}

async function timed(read: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await read();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/**
 * Usage read time of a log of 1 MB and of 1 GB: a sparse file (the old conversation) ending in a
 * recorded conversation. Codex "first": a new follower per read (stat, open, backward walk to the
 * newest turn_context and token_count). Claude "turn": one turn appended to a followed transcript,
 * then read (only the appended bytes). Claude "first": a Node's first read of a transcript (a whole
 * read up to WHOLE_FIRST_READ_BYTES; past it, a walk back to the newest turn); "count": the whole
 * count a long transcript's totals then take in the background (0 when the first read was whole),
 * i.e. what the first read cost before it was bounded (5 runs each). Prints p50 in ms and the ratios.
 */
export async function run(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "sa-bench-usage-"));
  try {
    const codexTail = await readFile(join(FIXTURES, "codex/fixtures/chat-history/0.171.0/conversation.jsonl"));
    const claudeTail = await readFile(join(FIXTURES, "claude/fixtures/usage/2.1.x/compacted.jsonl"));
    const turn = Buffer.from(`${claudeTail.toString("utf8").split("\n").slice(7, 11).join("\n")}\n`);
    const results = new Map<string, number>();
    console.log("size     case           p50 ms");
    for (const [label, size] of SIZES) {
      const codexLog = join(dir, `rollout-${size}.jsonl`);
      const claudeLog = join(dir, `transcript-${size}.jsonl`);
      for (const [path, tail] of [
        [codexLog, codexTail],
        [claudeLog, claudeTail],
      ] as const) {
        const file = await open(path, "w");
        await file.truncate(size - tail.length - 1);
        await file.close();
        await appendFile(path, Buffer.concat([Buffer.from("\n"), tail]));
      }
      const codex: number[] = [];
      for (let i = 0; i < ITERATIONS; i++) {
        const follower = new RecentUsageFollower(codexUsageReducer);
        codex.push(
          await timed(async () => codexUsage((await follower.read(codexLog))?.state ?? codexUsageReducer.initial())),
        );
      }
      const first: number[] = [];
      const count: number[] = [];
      const follower = new TotalsFollower(claudeUsageReducer);
      for (let i = 0; i < FIRST_READS; i++) {
        follower.clear();
        first.push(
          await timed(async () => {
            const read = await follower.read(claudeLog);
            return read && claudeUsage(read.state, undefined, read.complete);
          }),
        );
        count.push(await timed(() => follower.settled()));
      }
      const grown: number[] = [];
      for (let i = 0; i < ITERATIONS; i++) {
        await appendFile(claudeLog, turn);
        grown.push(
          await timed(async () => claudeUsage((await follower.read(claudeLog))?.state ?? claudeUsageReducer.initial())),
        );
      }
      for (const [name, times] of [
        ["codex first", codex],
        ["claude turn", grown],
        ["claude first", first],
        ["claude count", count],
      ] as const) {
        const value = p50(times);
        results.set(`${label} ${name}`, value);
        console.log(`${label.padEnd(8)} ${name.padEnd(14)} ${value.toFixed(3).padStart(8)}`);
      }
      await rm(codexLog);
      await rm(claudeLog);
    }
    for (const name of ["codex first", "claude turn", "claude first"]) {
      const ratio = (results.get(`1 GB ${name}`) ?? 0) / (results.get(`1 MB ${name}`) ?? 1);
      console.log(`${name} p50 ratio 1 GB / 1 MB: ${ratio.toFixed(2)}`);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
