import { randomUUID } from "node:crypto";
import { appendFile } from "node:fs/promises";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { type Session, SessionStatus, StatusReason } from "../gen/staragent/v1/session_pb.js";
import { WatchEventType } from "../gen/staragent/v1/session_service_pb.js";
import { type FleetSession, startAgentFleet } from "./agent-fleet.js";

/** Idle agent sessions around the ones written to, so each poll costs what it costs on a busy machine. */
const SESSIONS = 100;
/** Records timed: half open a turn (→ working), half complete it (→ review). */
const SAMPLES = 40;
/** Pause between opening a turn and completing it, drawn at random (below Claude's 3 s settle time). */
const TURN_MIN_MS = 100;
const TURN_MAX_MS = 700;
/** Pause between turns, drawn at random so writes land at every phase of the watch loop. */
const GAP_MIN_MS = 200;
const GAP_MAX_MS = 1_500;
/** Turns typed into each CLI's stand-ins for the per-CLI figures. */
const TURNS_PER_CLI = 8;
/** A sample slower than this (the goal's p95) is listed with what it was. */
const SLOW_SAMPLE_MS = 300;
/** Longest wait for one event before the benchmark fails (a missed change, not a slow one). */
const EVENT_TIMEOUT_MS = 15_000;

interface Waiter {
  readonly name: string;
  readonly matches: (s: Session) => boolean;
  readonly resolve: (at: number) => void;
}

/**
 * Time from a native log record being written to the WatchSessions event that reflects it, at a real
 * gRPC client of a real Hub watching 100 idle stand-in sessions. Records are appended to the logs of
 * claude (transcript) and codex (rollout) sessions at random times: a prompt or `task_started` (event:
 * WORKING), then an `end_turn` + `turn_duration` or `task_complete` (event: REVIEW with the turn's
 * completion id). Then, for every CLI with a stand-in, turns typed into its stand-ins, which write
 * their logs as the real CLIs do: from the log's last write the finished session reports to the event.
 * Prints p50/p95/max in ms; the goal is p95 under 300 ms for each log-backed CLI.
 */
export async function run(): Promise<void> {
  const fleet = await startAgentFleet(SESSIONS);
  const stop = new AbortController();
  try {
    const waiters = new Set<Waiter>();
    let snapshot: () => void = () => {};
    const snapshotSeen = new Promise<void>((r) => {
      snapshot = r;
    });
    const watching = (async () => {
      for await (const event of fleet.client.watchSessions({ parent: "nodes/-" }, { signal: stop.signal })) {
        const at = performance.now();
        if (event.type === WatchEventType.SNAPSHOT) snapshot();
        if (event.type !== WatchEventType.UPSERTED) continue;
        for (const session of event.sessions) {
          for (const w of waiters) {
            if (w.name === session.name && w.matches(session)) {
              waiters.delete(w);
              w.resolve(at);
            }
          }
        }
      }
    })().catch((err: unknown) => {
      if (!stop.signal.aborted) throw err;
    });
    await snapshotSeen;
    const eventFor = (name: string, what: string, matches: (s: Session) => boolean) =>
      new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`no WatchSessions event for ${name} (${what}) within ${EVENT_TIMEOUT_MS} ms`));
        }, EVENT_TIMEOUT_MS);
        const waiter: Waiter = {
          name,
          matches,
          resolve: (at) => {
            clearTimeout(timer);
            resolve(at);
          },
        };
        waiters.add(waiter);
      });
    const writable = fleet.sessions.filter((s) => s.cli === "claude" || s.cli === "codex");
    const times: number[] = [];
    const byCli = new Map<string, number[]>();
    /** The samples over the goal, with what they were, for telling a slow path from a missed event. */
    const slow: string[] = [];
    const timed = (session: FleetSession, what: string, ms: number) => {
      times.push(ms);
      byCli.set(session.cli, [...(byCli.get(session.cli) ?? []), ms]);
      if (ms > SLOW_SAMPLE_MS) slow.push(`${session.tmuxName} (${session.cli}, ${what}): ${ms.toFixed(0)} ms`);
    };
    for (let i = 0; i < SAMPLES / 2; i++) {
      const session = writable[Math.floor(Math.random() * writable.length)] as FleetSession;
      const log = await fleet.logOf(session);
      const records = turnRecords(session);
      const working = eventFor(session.name, "working", (s) => s.status === SessionStatus.WORKING);
      const opened = performance.now();
      await appendFile(log, records.open);
      timed(session, "working", (await working) - opened);
      await pause(TURN_MIN_MS, TURN_MAX_MS);
      const review = eventFor(
        session.name,
        "review",
        (s) => s.statusReason === StatusReason.UNSEEN_COMPLETION && s.completionId === records.completionId,
      );
      const completed = performance.now();
      await appendFile(log, records.complete);
      timed(session, "review", (await review) - completed);
      await pause(GAP_MIN_MS, GAP_MAX_MS);
    }
    const clis = [...new Set(fleet.sessions.map((s) => s.cli))].join(", ");
    console.log(
      `${times.length} records (claude transcripts, codex rollouts) among ${SESSIONS} sessions of ${clis}, half of them two per folder`,
    );
    console.log("record → WatchSessions event   p50 ms   p95 ms   max ms");
    for (const [name, all] of [["all", times] as const, ...byCli]) {
      const sorted = [...all].sort((a, b) => a - b);
      const pick = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
      console.log(
        `${name.padEnd(31)}${pick(0.5).toFixed(1).padStart(6)}   ${pick(0.95).toFixed(1).padStart(6)}   ${(sorted[sorted.length - 1] ?? Number.NaN).toFixed(1).padStart(6)}`,
      );
    }
    if (slow.length > 0) console.log(`samples over ${SLOW_SAMPLE_MS} ms: ${slow.join("; ")}`);

    // Every CLI with a stand-in, through its own log: a prompt typed into the stand-in, which writes its
    // turn as the real CLI does; timed from the log's last write the session reports (its
    // `last_activity_time`: the log's mtime, or opencode's and Kilo's session update time) to the event
    // saying the turn finished.
    console.log(`\na turn typed into ${TURNS_PER_CLI} sessions of each CLI, its log's last write → the REVIEW event`);
    console.log("CLI                             p50 ms   p95 ms   max ms");
    const current = new Map(
      (await fleet.client.listSessions({ parent: "nodes/-", pageSize: SESSIONS })).sessions.map((s) => [s.name, s]),
    );
    for (const cli of new Set(fleet.sessions.map((s) => s.cli))) {
      const latencies: number[] = [];
      for (const session of fleet.sessions.filter((s) => s.cli === cli).slice(0, TURNS_PER_CLI)) {
        const before = current.get(session.name)?.completionId ?? "";
        let finished: Session | undefined;
        const review = eventFor(session.name, "review", (s) => {
          const done = s.statusReason === StatusReason.UNSEEN_COMPLETION && s.completionId !== before;
          if (done) finished = s;
          return done;
        });
        await fleet.tmux.run("send-keys", "-t", `=${session.tmuxName}:`, "-l", `timed turn ${randomUUID()}`);
        await fleet.tmux.run("send-keys", "-t", `=${session.tmuxName}:`, "Enter");
        await review;
        const wrote = Number(finished?.lastActivityTime ? timestampMs(finished.lastActivityTime) : Number.NaN);
        latencies.push(Date.now() - wrote);
        await fleet.client.markSessionSeen({ name: session.name, completionId: finished?.completionId ?? "" });
        await pause(GAP_MIN_MS, GAP_MAX_MS);
      }
      const sorted = latencies.sort((a, b) => a - b);
      const pick = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
      console.log(
        `${cli.padEnd(31)}${pick(0.5).toFixed(1).padStart(6)}   ${pick(0.95).toFixed(1).padStart(6)}   ${(sorted[sorted.length - 1] ?? Number.NaN).toFixed(1).padStart(6)}`,
      );
    }
    stop.abort();
    await watching;
  } finally {
    stop.abort();
    await fleet.close();
  }
}

function pause(minMs: number, maxMs: number): Promise<void> {
  return new Promise((r) => setTimeout(r, minMs + Math.random() * (maxMs - minMs)));
}

/** The lines that open and complete one turn in the session's native log, in its CLI's format. */
export function turnRecords(session: FleetSession): { open: string; complete: string; completionId: string } {
  const line = (record: Record<string, unknown>) => `${JSON.stringify(record)}\n`;
  const timestamp = () => new Date().toISOString();
  if (session.cli === "codex") {
    const turnId = randomUUID();
    return {
      open: line({ timestamp: timestamp(), type: "event_msg", payload: { type: "task_started", turn_id: turnId } }),
      complete: line({
        timestamp: timestamp(),
        type: "event_msg",
        payload: { type: "task_complete", turn_id: turnId, last_agent_message: "Done", duration_ms: 300 },
      }),
      completionId: turnId,
    };
  }
  const prompt = randomUUID();
  const reply = randomUUID();
  const envelope = { isSidechain: false, userType: "external", cwd: session.cwd, version: "2.1.332", gitBranch: "" };
  return {
    open: line({
      ...envelope,
      parentUuid: null,
      type: "user",
      message: { role: "user", content: [{ type: "text", text: "benchmark prompt" }] },
      uuid: prompt,
      timestamp: timestamp(),
    }),
    complete:
      line({
        ...envelope,
        parentUuid: prompt,
        type: "assistant",
        message: {
          id: randomUUID(),
          type: "message",
          role: "assistant",
          model: "claude-bench",
          content: [{ type: "text", text: "Done" }],
          stop_reason: "end_turn",
        },
        uuid: reply,
        timestamp: timestamp(),
      }) +
      line({
        ...envelope,
        parentUuid: reply,
        type: "system",
        subtype: "turn_duration",
        durationMs: 300,
        uuid: randomUUID(),
        timestamp: timestamp(),
      }),
    completionId: prompt,
  };
}
