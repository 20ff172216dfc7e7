import { appendFile, mkdir, mkdtemp, open, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentContext } from "../services/node/agents/agent.js";
import { ClaudeModule } from "../services/node/agents/claude/claude-module.js";
import { encodeProjectDir } from "../services/node/agents/claude/transcript-finder.js";
import { testPane } from "../test/support/panes.js";

/** Log sizes measured (the goal: p50 under 1 ms each, 1 GB / 1 MB under 2). */
const SIZES: readonly [string, number][] = [
  ["1 MB", 1024 ** 2],
  ["100 MB", 100 * 1024 ** 2],
  ["1 GB", 1024 ** 3],
];
/** Reads per size and mode. */
const ITERATIONS = 300;
const CWD = "/home/me/proj";
const SESSION_ID = "3f1c2b7e-8d4a-4c1e-9b6f-0a2d5e7c9b11";
const PID = 4242;

/**
 * Status read time of a Claude Code session whose transcript is 1 MB, 100 MB and 1 GB: a sparse file
 * (the old conversation, never read) ending in one real turn (as Claude Code writes it). "cold" builds a new
 * module per read (stat, open, backward walk, parse, sessions file); "warm" is a poll of an unchanged
 * log (stat only). Prints p50/p95 in ms.
 */
export async function run(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "sa-bench-status-"));
  try {
    const turn = await readFile(
      join(import.meta.dirname, "../services/node/agents/claude/fixtures/2.1.x/turn-complete.jsonl"),
    );
    const projects = join(dir, ".claude", "projects", encodeProjectDir(CWD));
    await mkdir(projects, { recursive: true });
    await mkdir(join(dir, ".claude", "sessions"), { recursive: true });
    await writeFile(
      join(dir, ".claude", "sessions", `${PID}.json`),
      JSON.stringify({ pid: PID, sessionId: SESSION_ID, cwd: CWD, status: "idle" }),
    );
    const transcript = join(projects, `${SESSION_ID}.jsonl`);
    console.log("size     mode   p50 ms   p95 ms   status");
    const p50s = new Map<string, number>();
    for (const [label, size] of SIZES) {
      const file = await open(transcript, "w");
      await file.truncate(size - turn.length - 1);
      await file.close();
      await appendFile(transcript, Buffer.concat([Buffer.from("\n"), turn]));
      for (const mode of ["cold", "warm"] as const) {
        const warm = new ClaudeModule();
        const times: number[] = [];
        let decided = "";
        for (let i = 0; i < ITERATIONS; i++) {
          const module = mode === "cold" ? new ClaudeModule() : warm;
          const start = process.hrtime.bigint();
          const signals = await module.observe(context(dir));
          times.push(Number(process.hrtime.bigint() - start) / 1e6);
          decided = `${signals.turn} ${signals.completionId.slice(0, 8)}`;
        }
        times.sort((a, b) => a - b);
        const p50 = times[Math.floor(times.length / 2)] ?? 0;
        const p95 = times[Math.floor(times.length * 0.95)] ?? 0;
        if (mode === "cold") p50s.set(label, p50);
        console.log(
          `${label.padEnd(8)} ${mode.padEnd(6)} ${p50.toFixed(3).padStart(7)}  ${p95.toFixed(3).padStart(7)}   ${decided}`,
        );
      }
    }
    const ratio = (p50s.get("1 GB") ?? 0) / (p50s.get("1 MB") ?? 1);
    console.log(`cold p50 ratio 1 GB / 1 MB: ${ratio.toFixed(2)}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function context(home: string): AgentContext {
  const pane = testPane({
    sessionName: "bench",
    sessionCreated: 0,
    sessionActivity: 0,
    windowActivity: 0,
    panePid: PID - 1,
    paneCurrentCommand: "claude",
    paneCurrentPath: CWD,
    alternateOn: true,
    paneTitle: "✳ Claude Code",
  });
  return {
    pane,
    process: { pid: PID, ppid: PID - 1, comm: "claude", argv: ["claude"], startTicks: 1 },
    processStart: new Date(Date.now() - 3_600_000),
    env: async () => ({ HOME: home }),
    screen: async () => "",
    visibleScreen: async () => "",
    siblings: [],
  };
}
