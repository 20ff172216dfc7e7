import { randomBytes } from "node:crypto";
import { appendFile, readFile } from "node:fs/promises";
import { join } from "node:path";
import Database from "better-sqlite3";
import { WatchEventType } from "../gen/staragent/v1/session_service_pb.js";
import { claudeUsage, claudeUsageReducer } from "../services/node/agents/claude/usage.js";
import { codexUsage, codexUsageReducer } from "../services/node/agents/codex/usage.js";
import { queryUsage } from "../services/node/agents/opencode/usage.js";
import { RecentUsageFollower } from "../services/node/agents/usage/recent-follower.js";
import { TotalsFollower } from "../services/node/agents/usage/totals-follower.js";
import {
  type AgentFleet,
  childTicks,
  childTicksSince,
  cpuTicks,
  type FleetSession,
  startAgentFleet,
} from "./agent-fleet.js";

/**
 * Sessions watched (issue 23: 100 sessions whose logs grow by one turn a second); BENCH_SESSIONS sets
 * fewer for a quick look while profiling.
 */
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 100);
/** A folder for the Hub's CPU profile (`node --cpu-prof`), written when it stops; none unless set. */
const CPU_PROFILE_DIR = process.env.BENCH_CPU_PROFILE_DIR;
/** The CLIs whose native state this bench knows how to grow by a turn (those with usage records). */
const GROWN_CLIS = ["claude", "codex", "opencode"];
/** Time after the watcher connects (and after the growth starts) before measuring. */
const WARMUP_MS = 5_000;
/** Each measured window. */
const WINDOW_MS = 20_000;
/** One turn appended to every session's native state this often. */
const TURN_EVERY_MS = 1_000;
/** USER_HZ: `/proc/<pid>/stat` times are in these ticks. */
const TICKS_PER_SECOND = 100;
/** Keys whose values name one record, a response or a turn: a copied turn gets fresh ones. */
const ID_KEYS = new Set(["uuid", "parentUuid", "id", "requestId", "turn_id", "call_id", "promptId"]);

/** A JSON value with every id (ID_KEYS) suffixed and every `timestamp` now. */
function restamped(value: unknown, suffix: string, now: string): unknown {
  if (Array.isArray(value)) return value.map((v) => restamped(v, suffix, now));
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (ID_KEYS.has(key) && typeof v === "string" && v !== "") out[key] = `${v}-${suffix}`;
    else if (key === "timestamp" && typeof v === "string") out[key] = now;
    else out[key] = restamped(v, suffix, now);
  }
  return out;
}

/** The lines of a log's newest turn: from the last line `opens` says starts a turn. */
function newestTurn(text: string, opens: (record: Record<string, unknown>) => boolean): string[] {
  const lines = text.split("\n").filter((l) => l !== "");
  let start = 0;
  lines.forEach((line, i) => {
    if (opens(JSON.parse(line) as Record<string, unknown>)) start = i;
  });
  return lines.slice(start);
}

const claudeOpens = (r: Record<string, unknown>) =>
  r.type === "user" && typeof (r.message as { content?: unknown } | undefined)?.content === "string";
const codexOpens = (r: Record<string, unknown>) => r.type === "turn_context";

/** How the bench grows one session's native state by a turn. */
interface Grower {
  readonly session: FleetSession;
  grow(n: number): Promise<void>;
}

/** Appends a copy of the newest turn of each claude and codex log, and of each opencode session's. */
async function growers(fleet: AgentFleet, db: Database.Database): Promise<Grower[]> {
  const out: Grower[] = [];
  const opencode = db.prepare("SELECT id FROM session ORDER BY time_created").all() as { id: string }[];
  let nextOpencode = 0;
  for (const session of fleet.sessions) {
    if (session.cli === "opencode") {
      const id = opencode[nextOpencode++]?.id;
      if (!id) throw new Error(`no opencode session row for ${session.tmuxName}`);
      out.push({ session, grow: async (n) => growOpencode(db, id, n) });
      continue;
    }
    const path = await fleet.logOf(session);
    const turn = newestTurn(await readFile(path, "utf8"), session.cli === "claude" ? claudeOpens : codexOpens);
    out.push({
      session,
      grow: async (n) => {
        const now = new Date().toISOString();
        const lines = turn.map((l) => JSON.stringify(restamped(JSON.parse(l), `g${n}`, now)));
        await appendFile(path, `${lines.join("\n")}\n`);
      },
    });
  }
  return out;
}

/** Copies an opencode session's newest user message and its answer (with their parts) under new ids. */
function growOpencode(db: Database.Database, sessionId: string, n: number): void {
  const rows = db
    .prepare("SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created DESC, id DESC LIMIT 2")
    .all(sessionId) as { id: string; data: string }[];
  const now = Date.now();
  // The user message first, its answer a millisecond later, with ids in that order too: opencode orders
  // a session's messages by time and then id, and an answer sorting before its question reads as a
  // turn still waiting for its answer.
  const stamp = randomBytes(6).toString("hex");
  const ids = new Map(
    [...rows].reverse().map((r, i) => [r.id, `msg_${now.toString(16)}${String(n).padStart(6, "0")}${i}${stamp}`]),
  );
  const insertMessage = db.prepare(
    "INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)",
  );
  const parts = db.prepare("SELECT data FROM part WHERE message_id = ? ORDER BY time_created, id");
  const insertPart = db.prepare(
    "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)",
  );
  db.transaction(() => {
    for (const row of [...rows].reverse()) {
      const data = JSON.parse(row.data) as { parentID?: string; time?: Record<string, number> };
      const at = now + (data.parentID ? 1 : 0);
      if (data.parentID) data.parentID = ids.get(data.parentID) ?? data.parentID;
      data.time = Object.fromEntries(Object.keys(data.time ?? {}).map((k) => [k, at]));
      const id = ids.get(row.id) as string;
      insertMessage.run(id, sessionId, at, at, JSON.stringify(data));
      for (const part of parts.all(row.id) as { data: string }[]) {
        insertPart.run(`prt_${randomBytes(8).toString("hex")}`, id, sessionId, now, now, part.data);
      }
    }
    db.prepare("UPDATE session SET time_updated = ? WHERE id = ?").run(now, sessionId);
  })();
}

/** % of one core the watch loop (Hub, its tmux commands, the tmux server) used over `ms`. */
async function measure(fleet: AgentFleet, ms: number) {
  const hubPid = fleet.hub.process.pid as number;
  // The Hub's long-lived children (the pane lister's shell and the tmux clients it starts) count in
  // their own ticks, not in the Hub's reaped children's.
  const [hubBefore, tmuxBefore, helpersBefore] = await Promise.all([
    cpuTicks(hubPid),
    cpuTicks(fleet.tmuxServerPid),
    childTicks(hubPid),
  ]);
  const start = performance.now();
  await new Promise((r) => setTimeout(r, ms));
  const [hubAfter, tmuxAfter, helpersAfter] = await Promise.all([
    cpuTicks(hubPid),
    cpuTicks(fleet.tmuxServerPid),
    childTicks(hubPid),
  ]);
  const seconds = (performance.now() - start) / 1000;
  const pct = (ticks: number) => (ticks / TICKS_PER_SECOND / seconds) * 100;
  const hub = pct(hubAfter.self - hubBefore.self);
  const tmuxClients = pct(hubAfter.children - hubBefore.children + childTicksSince(helpersBefore, helpersAfter));
  const tmuxServer = pct(tmuxAfter.self - tmuxBefore.self);
  return { seconds, hub, tmuxClients, tmuxServer, total: hub + tmuxClients + tmuxServer };
}

/**
 * The watch loop's CPU with usage reading on, 100 stand-in sessions (claude, codex, opencode in turn)
 * and one WatchSessions watcher: first idle (the floor: nothing changes), then while every session's
 * native state grows by one turn a second (a copy of its newest turn appended to its transcript or
 * rollout, or inserted into opencode's database), then while the fleet as a whole grows by one turn a
 * second (one session after the other), each over a 20 s window. In the same growth window
 * the bench process reads the same sessions' usage after each growth with the modules' own readers,
 * so the share usage reading has in the total is measured beside it. Goal: under 3 % of a core.
 */
export async function run(): Promise<void> {
  const setupStart = Date.now();
  const fleet = await startAgentFleet(SESSIONS, {
    clis: GROWN_CLIS,
    cpuProfileDir: CPU_PROFILE_DIR,
  });
  const stop = new AbortController();
  const db = new Database(join(fleet.env.XDG_DATA_HOME, "opencode", "opencode.db"));
  let growing: NodeJS.Timeout | undefined;
  try {
    console.log(`fleet of ${SESSIONS} sessions ready in ${((Date.now() - setupStart) / 1000).toFixed(0)} s`);
    const counts = { upserted: 0, withUsage: 0 };
    let measuring = false;
    const watching = (async () => {
      for await (const event of fleet.client.watchSessions({ parent: "nodes/-" }, { signal: stop.signal })) {
        if (!measuring || event.type !== WatchEventType.UPSERTED) continue;
        counts.upserted += event.sessions.length;
        counts.withUsage += event.sessions.filter((s) => s.usage !== undefined).length;
      }
    })().catch((err: unknown) => {
      if (!stop.signal.aborted) throw err;
    });
    await new Promise((r) => setTimeout(r, WARMUP_MS));
    measuring = true;
    const idle = await measure(fleet, WINDOW_MS);
    const idleEvents = { ...counts };
    const grow = await growers(fleet, db);
    const claude = new TotalsFollower(claudeUsageReducer);
    const codex = new RecentUsageFollower(codexUsageReducer);
    const logs = new Map(
      await Promise.all(
        grow
          .filter((g) => g.session.cli !== "opencode")
          .map(async (g) => [g.session, await fleet.logOf(g.session)] as const),
      ),
    );
    const opencodeIds = (db.prepare("SELECT id FROM session ORDER BY time_created").all() as { id: string }[]).map(
      (r) => r.id,
    );
    let turns = 0;
    let readerMicros = 0;
    let reads = 0;
    let busy = false;
    // The tick in flight, awaited before the database closes.
    let inFlight: Promise<void> = Promise.resolve();
    const tick = async () => {
      if (busy) return;
      busy = true;
      let done = (): void => undefined;
      inFlight = new Promise((r) => {
        done = r;
      });
      try {
        turns++;
        await Promise.all(grow.map((g) => g.grow(turns)));
        if (!measuring) return;
        const before = process.cpuUsage();
        for (const [session, path] of logs) {
          if (session.cli === "claude") {
            const read = await claude.read(path);
            if (read) claudeUsage(read.state, undefined, read.complete);
          } else {
            const read = await codex.read(path);
            if (read) codexUsage(read.state);
          }
          reads++;
        }
        for (const id of opencodeIds) {
          queryUsage(db, id);
          reads++;
        }
        const used = process.cpuUsage(before);
        readerMicros += used.user + used.system;
      } finally {
        busy = false;
        done();
      }
    };
    measuring = false;
    growing = setInterval(() => void tick(), TURN_EVERY_MS);
    await new Promise((r) => setTimeout(r, WARMUP_MS));
    counts.upserted = 0;
    counts.withUsage = 0;
    readerMicros = 0;
    reads = 0;
    measuring = true;
    const grown = await measure(fleet, WINDOW_MS);
    measuring = false;
    clearInterval(growing);
    growing = undefined;
    await inFlight;
    // The fleet as people run it: one turn a second across all the sessions, round robin.
    let fleetTurns = 0;
    const fleetTick = () => {
      const grower = grow[fleetTurns % grow.length];
      fleetTurns++;
      inFlight = grower ? grower.grow(1_000_000 + fleetTurns).catch(() => undefined) : Promise.resolve();
    };
    growing = setInterval(fleetTick, TURN_EVERY_MS);
    await new Promise((r) => setTimeout(r, WARMUP_MS));
    const spread = await measure(fleet, WINDOW_MS);
    clearInterval(growing);
    growing = undefined;
    await inFlight;
    const readers = (readerMicros / 1e6 / grown.seconds) * 100;
    console.log(`windows of ${WINDOW_MS / 1000} s, ${SESSIONS} sessions (half of them two per folder), 1 watcher`);
    console.log("part                                 idle (floor)   each a turn a second   the fleet a turn a second");
    const row = (name: string, a: number, b: number, c: number) =>
      console.log(
        `${name.padEnd(36)} ${a.toFixed(2).padStart(8)} %   ${b.toFixed(2).padStart(17)} %   ${c.toFixed(2).padStart(22)} %`,
      );
    row("hub process (utime+stime)", idle.hub, grown.hub, spread.hub);
    row("tmux commands it ran, and its shells", idle.tmuxClients, grown.tmuxClients, spread.tmuxClients);
    row("tmux server", idle.tmuxServer, grown.tmuxServer, spread.tmuxServer);
    row("total", idle.total, grown.total, spread.total);
    console.log(
      `events: idle ${idleEvents.upserted} upserted sessions; growing ${counts.upserted} upserted (${counts.withUsage} with usage), ${turns} turns per session appended`,
    );
    console.log(
      `usage readers alone (bench process, the same ${reads} reads after each growth): ${readers.toFixed(2)} % of one core, ${Math.round(readerMicros / Math.max(1, reads))} µs a read`,
    );
    stop.abort();
    await watching;
  } finally {
    if (growing) clearInterval(growing);
    stop.abort();
    db.close();
    await fleet.close();
  }
}
