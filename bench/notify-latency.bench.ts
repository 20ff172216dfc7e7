import { appendFile } from "node:fs/promises";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { NotificationService } from "../gen/staragent/v1/notification_service_pb.js";
import { StatusReason } from "../gen/staragent/v1/session_pb.js";
import { SessionService, WatchEventType } from "../gen/staragent/v1/session_service_pb.js";
import { bearerInterceptor } from "../services/common/bearer.js";
import { MockPushService } from "../test/support/mock-push-service.js";
import { type ServerProcess, startServerProcess } from "../test/support/servers.js";
import { createTestTmux } from "../test/support/tmux.js";
import { waitFor } from "../test/support/wait.js";
import { type AgentFleet, FLEET_TOKEN, type FleetSession, startAgentFleet } from "./agent-fleet.js";
import { turnRecords } from "./status-latency.bench.js";
import { percentile } from "./terminal.bench.js";

/** Stand-in sessions on the remote Node (BENCH_NOTIFY_SESSIONS overrides it). */
const SESSIONS = Number(process.env.BENCH_NOTIFY_SESSIONS ?? 20);
/** Finished turns timed, each from its log record on the Node to the push request reaching the push service. */
const SAMPLES = Number(process.env.BENCH_NOTIFY_SAMPLES ?? 40);
/** Random pause between samples, so the changes fall on every phase of the Node's status loop. */
const GAP_MS = { min: 200, max: 1_200 } as const;
/** Longest wait for one push before the benchmark fails (a lost notification, not a slow one). */
const PUSH_TIMEOUT_MS = 15_000;
const HUB_TOKEN = "bench-notify-hub-token";

/**
 * Time from a status change on a remote Node (a finished turn written to a stand-in's native log) to
 * the Hub's encrypted, VAPID-signed push request reaching a push service on loopback, p50 and p95
 * (goal: p95 under 1 s). The floor is measured in the same run: the same change reaching the Hub's
 * WatchSessions, which is what the notification waits on; the difference is the notification's own
 * cost (a GetChat for the reply's first line, encryption, signing, the request).
 */
export async function run(): Promise<void> {
  let fleet: AgentFleet | undefined;
  let hub: ServerProcess | undefined;
  const hubTmux = createTestTmux();
  const push = new MockPushService();
  const stop = new AbortController();
  try {
    fleet = await startAgentFleet(SESSIONS, { node: "w1" });
    await push.start();
    hub = await startServerProcess({
      kind: "hub",
      tmuxSocket: hubTmux.socketName,
      token: HUB_TOKEN,
      args: ["--node", `w1=${fleet.hub.url}`],
      env: { STARAGENT_NODE_TOKEN: FLEET_TOKEN },
    });
    const transport = createGrpcTransport({ baseUrl: hub.url, interceptors: [bearerInterceptor(HUB_TOKEN)] });
    const notifications = createClient(NotificationService, transport);
    const sessions = createClient(SessionService, transport);
    const device = push.device("bench");
    await notifications.addPushSubscription({ endpoint: device.endpoint, p256dh: device.p256dh, auth: device.auth });
    await waitFor(
      async () => (await sessions.listSessions({ parent: "nodes/w1" })).sessions.length >= SESSIONS,
      "the Node's sessions through the Hub",
      30_000,
    );
    // The Hub's watch, as a dashboard sees it: when each completion reached the Hub.
    const reached = new Map<string, number>();
    const watching = (async () => {
      for await (const event of sessions.watchSessions({ parent: "nodes/-" }, { signal: stop.signal })) {
        if (event.type !== WatchEventType.UPSERTED) continue;
        for (const s of event.sessions) {
          if (s.statusReason === StatusReason.UNSEEN_COMPLETION && !reached.has(s.completionId)) {
            reached.set(s.completionId, performance.now());
          }
        }
      }
    })().catch((err: unknown) => {
      if (!stop.signal.aborted) throw err;
    });
    const writable = fleet.sessions.filter((s) => s.cli === "claude" || s.cli === "codex");
    const toPush: number[] = [];
    const toWatch: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const session = writable[i % writable.length] as FleetSession;
      const log = await fleet.logOf(session);
      const records = turnRecords(session);
      await appendFile(log, records.open);
      await pause();
      const since = push.received.length;
      const written = performance.now();
      await appendFile(log, records.complete);
      const pushed = await push.waitFor(
        (p) => push.received.indexOf(p) >= since && p.plaintext.includes(`"session":"${session.name}"`),
        `for ${session.name}`,
        PUSH_TIMEOUT_MS,
      );
      toPush.push(pushed.at - written);
      const watched = reached.get(records.completionId);
      if (watched !== undefined) toWatch.push(watched - written);
      await pause();
    }
    toPush.sort((a, b) => a - b);
    toWatch.sort((a, b) => a - b);
    const row = (label: string, t: number[]) =>
      `${label.padEnd(40)} ${percentile(t, 50).toFixed(0).padStart(6)} ${percentile(t, 95).toFixed(0).padStart(6)} ${(t.at(-1) ?? Number.NaN).toFixed(0).padStart(6)}`;
    console.log(`${toPush.length} finished turns among ${SESSIONS} stand-in sessions on remote Node w1`);
    console.log(`${"".padEnd(40)} ${"p50 ms".padStart(6)} ${"p95 ms".padStart(6)} ${"max ms".padStart(6)}`);
    console.log(row("log record → push request at the service", toPush));
    console.log(row("log record → Hub's WatchSessions (floor)", toWatch));
    console.log(`goal: p95 < 1000 ms → ${percentile(toPush, 95) < 1000 ? "met" : "missed"}`);
    stop.abort();
    await watching;
  } finally {
    stop.abort();
    await hub?.stop();
    await hubTmux.close();
    await push.close();
    await fleet?.close();
  }
}

function pause(): Promise<void> {
  return new Promise((r) => setTimeout(r, GAP_MS.min + Math.random() * (GAP_MS.max - GAP_MS.min)));
}
