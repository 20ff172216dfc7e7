import { WatchEventType } from "../gen/staragent/v1/session_service_pb.js";
import { cpuTicks, FLEET_CLIS, startAgentFleet } from "./agent-fleet.js";

/** Idle agent sessions watched (issue 3: the watch loop's CPU with 100 idle agent sessions). */
const SESSIONS = 100;
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
  const fleet = await startAgentFleet(SESSIONS);
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
    const [hubBefore, tmuxBefore] = await Promise.all([cpuTicks(hubPid), cpuTicks(fleet.tmuxServerPid)]);
    const start = performance.now();
    await new Promise((r) => setTimeout(r, WINDOW_MS));
    const [hubAfter, tmuxAfter] = await Promise.all([cpuTicks(hubPid), cpuTicks(fleet.tmuxServerPid)]);
    const seconds = (performance.now() - start) / 1000;
    measuring = false;
    const pct = (ticks: number) => (ticks / TICKS_PER_SECOND / seconds) * 100;
    const hubSelf = pct(hubAfter.self - hubBefore.self);
    const tmuxClients = pct(hubAfter.children - hubBefore.children);
    const tmuxServer = pct(tmuxAfter.self - tmuxBefore.self);
    console.log(
      `window ${seconds.toFixed(1)} s, ${SESSIONS} idle sessions of ${FLEET_CLIS.join(", ")} (half of them two per folder), 1 watcher`,
    );
    console.log("part                                % of one core");
    console.log(`hub process (utime+stime)           ${hubSelf.toFixed(2).padStart(6)}`);
    console.log(`tmux commands it ran (cutime+cstime) ${tmuxClients.toFixed(2).padStart(5)}`);
    console.log(`tmux server                         ${tmuxServer.toFixed(2).padStart(6)}`);
    console.log(`total                               ${(hubSelf + tmuxClients + tmuxServer).toFixed(2).padStart(6)}`);
    console.log(
      `events in the window: ${counts.upserted} upserted sessions, ${counts.removed} removed, ${counts.heartbeat} heartbeats`,
    );
    stop.abort();
    await watching;
  } finally {
    stop.abort();
    await fleet.close();
  }
}
