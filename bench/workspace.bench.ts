import { execFileSync, spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { getChanges, getFileDiff, LineCounts, readStatus } from "../services/node/workspace/changes.js";
import { GIT_NICENESS, runGit } from "../services/node/workspace/git.js";
import { GIT_TEST_ENV } from "../test/support/git.js";
import { childTicks, childTicksSince, cpuTicks, startAgentFleet } from "./agent-fleet.js";

/** Files in the generated repository (the issue: 100 000 files with 50 changes). */
const FILES = 100_000;
/** Files per folder of the generated repository. */
const FILES_PER_FOLDER = 250;
/** Changes made after the commit: modified files, then untracked ones. */
const MODIFIED = 40;
const UNTRACKED = 10;
/** Calls measured per RPC. */
const ITERATIONS = 30;
/** Idle sessions in git repositories for the watch loop's CPU (the issue: 100). */
const SESSIONS = 100;
/** Time after the watcher connects before measuring, so start-up work is not counted. */
const WARMUP_MS = 10_000;
/** The measured window. */
const WINDOW_MS = 30_000;
/** USER_HZ: `/proc/<pid>/stat` times are in these ticks. */
const TICKS_PER_SECOND = 100;

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/** Times `call` ITERATIONS times (after one warm-up call) with the event loop's delay monitored meanwhile. */
async function measure(call: () => Promise<unknown>) {
  await call();
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const times: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    const start = performance.now();
    await call();
    times.push(performance.now() - start);
  }
  delay.disable();
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p95: percentile(times, 95), loopMaxMs: delay.max / 1e6 };
}

/**
 * GetChanges and GetFileDiff (the Node's own functions, in this process, so the event loop measured is
 * the one that serves them) on a generated repository of 100 000 files with 50 changes: p50/p95 and
 * the event loop's longest delay meanwhile (goal: p95 under 300 ms, delay under 20 ms). Then the CPU of
 * a Hub's watch loop with 100 idle stand-in sessions each in a git repository (goal: under 3 % of a
 * core), its own time and that of the git and tmux commands it ran.
 */
export async function run(): Promise<void> {
  // BENCH_WORKSPACE_PART=watch measures the watch loop's CPU alone (part two), =calls the calls alone.
  const part = process.env.BENCH_WORKSPACE_PART;
  if (part !== "watch") await calls();
  if (part !== "calls") {
    await watchLoopCpu(true);
    // The floor in the same run: the same fleet in folders that are no repositories.
    await watchLoopCpu(false);
  }
  console.log(`load average: ${(await import("node:fs")).readFileSync("/proc/loadavg", "utf8").trim()}`);
}

/** Part one: GetChanges and GetFileDiff on the generated repository, beside their floors. */
async function calls(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "sa-bench-workspace-"));
  try {
    const repo = join(dir, "repo");
    const setup = performance.now();
    for (let folder = 0; folder < FILES / FILES_PER_FOLDER; folder++) {
      const path = join(repo, "src", `m${String(folder).padStart(4, "0")}`);
      await mkdir(path, { recursive: true });
      await Promise.all(
        Array.from({ length: FILES_PER_FOLDER }, (_, i) =>
          writeFile(
            join(path, `f${i}.ts`),
            `export const v${i} = ${folder};\nexport function f() {\n  return v${i};\n}\n`,
          ),
        ),
      );
    }
    execFileSync("git", ["-C", repo, "init", "-q", "-b", "main"], { env: GIT_TEST_ENV });
    execFileSync("git", ["-C", repo, "add", "."], { env: GIT_TEST_ENV });
    execFileSync("git", ["-C", repo, "commit", "-qm", "generated"], { env: GIT_TEST_ENV });
    for (let i = 0; i < MODIFIED; i++) {
      await writeFile(
        join(repo, "src", `m${String(i * 7).padStart(4, "0")}`, "f1.ts"),
        `export const changed = ${i};\n`,
      );
    }
    for (let i = 0; i < UNTRACKED; i++) await writeFile(join(repo, `new-${i}.ts`), `export const n = ${i};\n`);
    // One status first, so the index's stat data is fresh as an agent's repository would be.
    execFileSync("git", ["-C", repo, "status", "--porcelain"], { env: GIT_TEST_ENV });
    console.log(
      `repository of ${FILES} files, ${MODIFIED + UNTRACKED} changes, made in ${((performance.now() - setup) / 1000).toFixed(0)} s`,
    );
    const changes = await getChanges(repo);
    if (changes.files.length !== MODIFIED + UNTRACKED)
      throw new Error(`expected 50 changes, got ${changes.files.length}`);
    const floor = await measure(async () =>
      execFileSync("git", ["-C", repo, "status", "--porcelain=v2", "-z", "--untracked-files=all"], {
        env: GIT_TEST_ENV,
      }),
    );
    // The floors of the event-loop delay in this run: an idle loop (only timers), and spawning `true`.
    const idle = await measure(() => new Promise((r) => setTimeout(r, 200)));
    const spawnOnly = await measure(() => new Promise((r) => spawn("true", [], { stdio: "ignore" }).once("close", r)));
    // And git status as a child with nothing else to do here: what the machine's load alone delays timers by.
    const statusChild = await measure(
      () =>
        new Promise((r) =>
          spawn("git", ["-C", repo, "status", "--porcelain=v2", "-z", "--untracked-files=all"], {
            stdio: "ignore",
            env: GIT_TEST_ENV,
          }).once("close", r),
        ),
    );
    // The same at the niceness runGit gives git: what lowering git's priority alone does.
    const statusChildNiced = await measure(
      () =>
        new Promise((r) =>
          spawn(
            "nice",
            ["-n", String(GIT_NICENESS), "git", "-C", repo, "status", "--porcelain=v2", "-z", "--untracked-files=all"],
            { stdio: "ignore", env: GIT_TEST_ENV },
          ).once("close", r),
        ),
    );
    console.log(
      `load average at the start of the calls: ${(await import("node:fs")).readFileSync("/proc/loadavg", "utf8").trim()}`,
    );
    const changedPaths = changes.files.filter((f) => f.linesAdded > 0 && !f.path.startsWith("new-")).map((f) => f.path);
    let rewrites = 0;
    const numstat = (paths: readonly string[]) =>
      runGit(repo, ["diff", "HEAD", "--numstat", "-z", "-M", "--no-ext-diff", "--no-textconv", "--", ...paths]);
    const rows: Array<[string, Awaited<ReturnType<typeof measure>>]> = [
      // GetChanges of an unchanged repository: every line count remembered from the call before.
      ["GetChanges", await measure(() => getChanges(repo))],
      // Nothing remembered: each call diffs all 40 changed tracked files (GetChanges before 2026-12-08).
      ["GetChanges, no count remembered", await measure(() => getChanges(repo, undefined, runGit, new LineCounts()))],
      // One changed file rewritten before each call: it alone is diffed again.
      [
        "GetChanges, one file rewritten each call",
        await measure(async () => {
          rewrites++;
          await writeFile(join(repo, "src", "m0007", "f1.ts"), `export const changed = ${rewrites % 10};\n`);
          return getChanges(repo);
        }),
      ],
      // GetChanges split: its status, then the line counts of the changed tracked paths only.
      ["part: git status (readStatus)", await measure(() => readStatus(repo))],
      [`part: numstat of ${changedPaths.length} changed paths`, await measure(() => numstat(changedPaths))],
      ["before: numstat of the whole tree", await measure(() => numstat(["."]))],
      ["GetFileDiff (modified)", await measure(() => getFileDiff(repo, { path: "src/m0007/f1.ts", staged: false }))],
      ["GetFileDiff (untracked)", await measure(() => getFileDiff(repo, { path: "new-3.ts", staged: false }))],
      ["floor: git status alone (blocking)", floor],
      ["floor: idle loop (200 ms timers)", idle],
      ["floor: spawning `true`", spawnOnly],
      ["floor: git status as a child, awaited", statusChild],
      [`git status as a child at nice ${GIT_NICENESS}`, statusChildNiced],
    ];
    console.log("call                                    p50 ms   p95 ms   event-loop max delay ms");
    for (const [label, r] of rows) {
      const loop = label.startsWith("floor: git status alone") ? "(n/a)" : r.loopMaxMs.toFixed(1);
      console.log(`${label.padEnd(39)} ${r.p50.toFixed(1).padStart(6)}   ${r.p95.toFixed(1).padStart(6)}   ${loop}`);
    }
  } finally {
    // A git killed by its timeout may still be writing into .git for a moment: retry, so the removal
    // does not hide the error that ended the calls.
    await rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  }
}

/** The CPU of a Hub watching 100 idle stand-in sessions, in git repositories or (the floor) not. */
async function watchLoopCpu(gitRepos: boolean): Promise<void> {
  const fleet = await startAgentFleet(SESSIONS, { gitRepos });
  const stop = new AbortController();
  try {
    const watching = (async () => {
      for await (const _ of fleet.client.watchSessions({ parent: "nodes/-" }, { signal: stop.signal })) {
        // Only the watch's cost matters here.
      }
    })().catch((err: unknown) => {
      if (!stop.signal.aborted) throw err;
    });
    await new Promise((r) => setTimeout(r, WARMUP_MS));
    const listed = (await fleet.client.listSessions({ parent: "nodes/-", pageSize: 1000 })).sessions;
    const counted = listed.filter((s) => s.changedFiles !== undefined).length;
    const hubPid = fleet.hub.process.pid as number;
    const [hubBefore, tmuxBefore, helpersBefore] = await Promise.all([
      cpuTicks(hubPid),
      cpuTicks(fleet.tmuxServerPid),
      childTicks(hubPid),
    ]);
    const start = performance.now();
    await new Promise((r) => setTimeout(r, WINDOW_MS));
    const [hubAfter, tmuxAfter, helpersAfter] = await Promise.all([
      cpuTicks(hubPid),
      cpuTicks(fleet.tmuxServerPid),
      childTicks(hubPid),
    ]);
    const seconds = (performance.now() - start) / 1000;
    const pct = (ticks: number) => (ticks / TICKS_PER_SECOND / seconds) * 100;
    const hubSelf = pct(hubAfter.self - hubBefore.self);
    // What it spawned and reaped, and what its long-lived shells (pane lister, git) ran.
    const children = pct(hubAfter.children - hubBefore.children + childTicksSince(helpersBefore, helpersAfter));
    const tmuxServer = pct(tmuxAfter.self - tmuxBefore.self);
    console.log(
      `\nwindow ${seconds.toFixed(1)} s, ${SESSIONS} idle sessions ${gitRepos ? "in git repositories" : "in plain folders (the floor)"} (${counted} with a count), 1 watcher`,
    );
    console.log("part                                      % of one core");
    console.log(`hub process (utime+stime)                 ${hubSelf.toFixed(2).padStart(6)}`);
    console.log(`git and tmux commands it ran (children)   ${children.toFixed(2).padStart(6)}`);
    console.log(`tmux server                               ${tmuxServer.toFixed(2).padStart(6)}`);
    console.log(
      `total                                     ${(hubSelf + children + tmuxServer).toFixed(2).padStart(6)}`,
    );
    stop.abort();
    await watching;
  } finally {
    stop.abort();
    await fleet.close();
  }
}
