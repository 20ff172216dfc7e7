import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { WatchEventType } from "../gen/staragent/v1/session_service_pb.js";
import { WATCH_IDLE_INTERVAL_MS } from "../services/node/status/watch-loop.js";
import { paneFormat } from "../services/node/tmux/panes.js";
import {
  type AgentFleet,
  childTicks,
  childTicksSince,
  cpuTicks,
  FLEET_CLIS,
  startAgentFleet,
  threadTicks,
  threadTicksSince,
} from "./agent-fleet.js";

const execFileAsync = promisify(execFile);

/** Idle agent sessions watched (issue 3: the watch loop's CPU with 100 idle agent sessions). */
const SESSIONS = 100;
/**
 * BENCH_CLIS (comma-separated stand-in names) narrows the fleet to those CLIs, to split the cost by CLI;
 * BENCH_CPU_PROFILE_DIR makes the Hub write a CPU profile there when it stops.
 */
const CLIS = process.env.BENCH_CLIS?.split(",").filter((c) => c !== "") ?? FLEET_CLIS;
const CPU_PROFILE_DIR = process.env.BENCH_CPU_PROFILE_DIR;
/** Time after the watcher connects before measuring, so start-up work is not counted. */
const WARMUP_MS = 5_000;
/** The measured window. */
const WINDOW_MS = 20_000;
/** USER_HZ: `/proc/<pid>/stat` times are in these ticks. */
const TICKS_PER_SECOND = 100;

/**
 * CPU of the watch loop with 100 idle stand-in agent sessions (spread over every CLI the registry has
 * a stand-in for, FLEET_CLIS; half of them two instances of one CLI per folder; each after one completed
 * turn, all seen) and one WatchSessions watcher at a real gRPC client: the Hub
 * process itself (utime+stime), the `tmux` commands it spawned (cutime+cstime) and the private tmux
 * server, over a 20 s window. Prints % of one core; the goal is under 3 %.
 */
export async function run(): Promise<void> {
  const setupStart = Date.now();
  const fleet = await startAgentFleet(SESSIONS, { clis: CLIS, cpuProfileDir: CPU_PROFILE_DIR });
  const stop = new AbortController();
  try {
    console.log(`fleet of ${SESSIONS} idle sessions ready in ${((Date.now() - setupStart) / 1000).toFixed(0)} s`);
    const counts = { snapshot: 0, upserted: 0, removed: 0, heartbeat: 0 };
    let measuring = false;
    const watching = (async () => {
      for await (const event of fleet.client.watchSessions({ parent: "nodes/-" }, { signal: stop.signal })) {
        if (!measuring) continue;
        if (event.type === WatchEventType.SNAPSHOT) counts.snapshot++;
        else if (event.type === WatchEventType.UPSERTED) counts.upserted += event.sessions.length;
        else if (event.type === WatchEventType.REMOVED) counts.removed += event.removedNames.length;
        else if (event.type === WatchEventType.HEARTBEAT) counts.heartbeat++;
      }
    })().catch((err: unknown) => {
      if (!stop.signal.aborted) throw err;
    });
    await new Promise((r) => setTimeout(r, WARMUP_MS));
    measuring = true;
    const hubPid = fleet.hub.process.pid as number;
    const [hubBefore, tmuxBefore, threadsBefore, helpersBefore] = await Promise.all([
      cpuTicks(hubPid),
      cpuTicks(fleet.tmuxServerPid),
      threadTicks(hubPid),
      childTicks(hubPid),
    ]);
    const start = performance.now();
    await new Promise((r) => setTimeout(r, WINDOW_MS));
    const [hubAfter, tmuxAfter, threadsAfter, helpersAfter] = await Promise.all([
      cpuTicks(hubPid),
      cpuTicks(fleet.tmuxServerPid),
      threadTicks(hubPid),
      childTicks(hubPid),
    ]);
    const seconds = (performance.now() - start) / 1000;
    measuring = false;
    const pct = (ticks: number) => (ticks / TICKS_PER_SECOND / seconds) * 100;
    const hubSelf = pct(hubAfter.self - hubBefore.self);
    const tmuxClients = pct(hubAfter.children - hubBefore.children + childTicksSince(helpersBefore, helpersAfter));
    const tmuxServer = pct(tmuxAfter.self - tmuxBefore.self);
    console.log(
      `window ${seconds.toFixed(1)} s, ${SESSIONS} idle sessions of ${CLIS.join(", ")} (half of them two per folder), 1 watcher`,
    );
    console.log("part                                % of one core");
    console.log(`hub process (utime+stime)           ${hubSelf.toFixed(2).padStart(6)}`);
    for (const [name, ticks] of threadTicksSince(threadsBefore, threadsAfter).filter(([, t]) => t > 0))
      console.log(`  thread ${name.padEnd(28)}${pct(ticks).toFixed(2).padStart(6)}`);
    console.log(`tmux commands it ran and its lister   ${tmuxClients.toFixed(2).padStart(5)}`);
    console.log(`tmux server                         ${tmuxServer.toFixed(2).padStart(6)}`);
    console.log(`total                               ${(hubSelf + tmuxClients + tmuxServer).toFixed(2).padStart(6)}`);
    console.log(
      `events in the window: ${counts.upserted} upserted sessions, ${counts.removed} removed, ${counts.heartbeat} heartbeats`,
    );
    // The floor in the same run: an idle look's one spawned command alone, with the Hub paused.
    process.kill(hubPid, "SIGSTOP");
    try {
      // This process's own work (its watch stream, timers) over an equal window with nothing spawned,
      // so the floor's spawning row counts the spawning alone.
      const restBefore = await cpuTicks(process.pid);
      await new Promise((r) => setTimeout(r, seconds * 1000));
      const rest = (await cpuTicks(process.pid)).self - restBefore.self;
      const floor = await listPanesFloor(fleet, seconds);
      const spawning = Math.max(0, floor.self - rest);
      console.log(
        `floor, the Hub paused: this process spawning \`tmux list-panes -a\` of the same ${SESSIONS} panes every ${WATCH_IDLE_INTERVAL_MS} ms`,
      );
      console.log(`  this process at rest (not counted)  ${pct(rest).toFixed(2).padStart(6)}`);
      console.log(`  spawning it (this process)          ${pct(spawning).toFixed(2).padStart(6)}`);
      console.log(`  the tmux commands                   ${pct(floor.children).toFixed(2).padStart(6)}`);
      console.log(`  tmux server                         ${pct(floor.server).toFixed(2).padStart(6)}`);
      const blocked = floor.blockedMs;
      console.log(
        `  each spawn call held this process's thread: p50 ${(blocked[Math.floor(blocked.length / 2)] ?? 0).toFixed(1)} ms, max ${(blocked.at(-1) ?? 0).toFixed(1)} ms`,
      );
      console.log(
        `  total                               ${pct(spawning + floor.children + floor.server)
          .toFixed(2)
          .padStart(6)}`,
      );
    } finally {
      process.kill(hubPid, "SIGCONT");
    }
    stop.abort();
    await watching;
  } finally {
    stop.abort();
    await fleet.close();
  }
}

/**
 * CPU ticks of `tmux list-panes -a` with the Hub's format, run from this process every
 * WATCH_IDLE_INTERVAL_MS for `seconds` (execFile, as a bare Node.js program would): this process's own
 * ticks (spawning it), its children's (the tmux commands) and the tmux server's, and how long each
 * `spawn` call held this process's one thread (Node.js forks and waits for the exec there).
 */
async function listPanesFloor(
  fleet: AgentFleet,
  seconds: number,
): Promise<{ self: number; children: number; server: number; blockedMs: number[] }> {
  const format = paneFormat().format;
  const [before, serverBefore] = await Promise.all([cpuTicks(process.pid), cpuTicks(fleet.tmuxServerPid)]);
  const end = performance.now() + seconds * 1000;
  const blockedMs: number[] = [];
  while (performance.now() < end) {
    const called = performance.now();
    const listed = execFileAsync("tmux", ["-L", fleet.tmux.socketName, "list-panes", "-a", "-F", format]);
    blockedMs.push(performance.now() - called);
    await listed;
    await new Promise((r) => setTimeout(r, WATCH_IDLE_INTERVAL_MS));
  }
  const [after, serverAfter] = await Promise.all([cpuTicks(process.pid), cpuTicks(fleet.tmuxServerPid)]);
  return {
    self: after.self - before.self,
    children: after.children - before.children,
    server: serverAfter.self - serverBefore.self,
    blockedMs: blockedMs.sort((a, b) => a - b),
  };
}
