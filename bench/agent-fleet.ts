import { mkdir, mkdtemp, readdir, readFile, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Client, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { type Session, StatusReason } from "../gen/staragent/v1/session_pb.js";
import { SessionService } from "../gen/staragent/v1/session_service_pb.js";
import { bearerInterceptor } from "../services/common/bearer.js";
import { encodeProjectDir } from "../services/node/agents/claude/transcript-finder.js";
import { readSessionMetaCwd } from "../services/node/agents/codex/rollout-finder.js";
import { type ServerProcess, startServerProcess } from "../test/support/servers.js";
import { createTestTmux, type TestTmux } from "../test/support/tmux.js";
import { waitFor } from "../test/support/wait.js";

const STAND_INS = join(import.meta.dirname, "../test/stand-ins");
const TOKEN = "bench-fleet-token";
/** The stand-in CLIs, assigned to sessions in turn so a fleet is a mix of the three. */
export const FLEET_CLIS = ["claude", "codex", "opencode"] as const;
/** Largest page ListSessions is asked for: a fleet fits in one page. */
const PAGE_SIZE = 1_000;
/** How long a fleet of stand-ins may take to start and finish its first turn on a busy 2-core machine. */
const SETUP_TIMEOUT_MS = 300_000;
/** Stand-in turn timing: short, the fleet only needs one completed turn per session. */
const STANDIN_THINK_MS = "50";
const STANDIN_TURN_MS = "100";

/** One session of the fleet. */
export interface FleetSession {
  readonly tmuxName: string;
  readonly name: string;
  readonly cli: (typeof FLEET_CLIS)[number];
  readonly cwd: string;
}

/** A real Hub over a private tmux server with idle stand-in agent sessions after one completed turn each. */
export interface AgentFleet {
  readonly hub: ServerProcess;
  readonly tmux: TestTmux;
  readonly client: Client<typeof SessionService>;
  readonly sessions: readonly FleetSession[];
  /** Where the stand-ins keep their native state. */
  readonly env: { readonly CLAUDE_CONFIG_DIR: string; readonly CODEX_HOME: string; readonly XDG_DATA_HOME: string };
  /** The pid of the private tmux server. */
  readonly tmuxServerPid: number;
  /** The native log of a claude or codex session (found by its cwd). */
  logOf(session: FleetSession): Promise<string>;
  /** Stops the Hub, kills the private tmux server (and with it the stand-ins), removes every file. */
  close(): Promise<void>;
}

/** An authenticated SessionService client of `url`. */
export function sessionClient(url: string): Client<typeof SessionService> {
  const transport = createGrpcTransport({
    baseUrl: url,
    interceptors: [bearerInterceptor(TOKEN)],
  });
  return createClient(SessionService, transport);
}

/**
 * Starts `count` stand-in sessions (claude, codex, opencode in turn, each in its own folder) under a real
 * Hub on a private tmux socket, completes one turn in each so real native logs exist, and marks every
 * completion seen, so the fleet ends idle. Cleans up everything it started when setup fails.
 */
export async function startAgentFleet(count: number): Promise<AgentFleet> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), "sa-bench-fleet-")));
  const home = join(dir, "user");
  const env = {
    CLAUDE_CONFIG_DIR: join(home, ".claude"),
    CODEX_HOME: join(home, ".codex"),
    XDG_DATA_HOME: join(home, ".local", "share"),
  };
  await Promise.all([mkdir(env.CLAUDE_CONFIG_DIR, { recursive: true }), mkdir(env.CODEX_HOME, { recursive: true })]);
  await mkdir(env.XDG_DATA_HOME, { recursive: true });
  const processEnv: NodeJS.ProcessEnv = {
    ...process.env,
    ...env,
    HOME: home,
    PATH: `${STAND_INS}:${process.env.PATH}`,
    STANDIN_THINK_MS,
    STANDIN_TURN_MS,
  };
  const tmux = createTestTmux(processEnv);
  let hub: ServerProcess | undefined;
  const close = async () => {
    await hub?.stop();
    await tmux.close();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    hub = await startServerProcess({ kind: "hub", tmuxSocket: tmux.socketName, token: TOKEN, env: processEnv });
    const client = sessionClient(hub.url);
    const sessions: FleetSession[] = [];
    for (let i = 0; i < count; i++) {
      const cli = FLEET_CLIS[i % FLEET_CLIS.length] as FleetSession["cli"];
      const tmuxName = `agent-${String(i).padStart(3, "0")}`;
      const cwd = join(dir, "projects", tmuxName);
      await mkdir(cwd, { recursive: true });
      await client.createSession({ parent: "nodes/local", sessionId: tmuxName, cwd, command: [cli] });
      sessions.push({ tmuxName, name: `nodes/local/sessions/${tmuxName}`, cli, cwd });
    }
    const list = async () => (await client.listSessions({ parent: "nodes/local", pageSize: PAGE_SIZE })).sessions;
    const all = (sessionsNow: Session[], reason: StatusReason) =>
      sessionsNow.length === count && sessionsNow.every((s) => s.statusReason === reason);
    await waitFor(async () => all(await list(), StatusReason.NO_TURN), "every stand-in started", SETUP_TIMEOUT_MS, 500);
    for (const s of sessions) {
      await tmux.run("send-keys", "-t", `=${s.tmuxName}:`, "-l", "hello");
      await tmux.run("send-keys", "-t", `=${s.tmuxName}:`, "Enter");
    }
    const done = await waitFor(
      async () => {
        const now = await list();
        return all(now, StatusReason.UNSEEN_COMPLETION) && now;
      },
      "one completed turn in every session",
      SETUP_TIMEOUT_MS,
      500,
    );
    for (const s of done) await client.markSessionSeen({ name: s.name, completionId: s.completionId });
    await waitFor(async () => all(await list(), StatusReason.SEEN_COMPLETION), "every completion seen", 30_000, 200);
    const tmuxServerPid = Number((await tmux.run("display-message", "-p", "#{pid}")).trim());
    const started = hub;
    return {
      hub: started,
      tmux,
      client,
      sessions,
      env,
      tmuxServerPid,
      logOf: (s) => findLog(env, s),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

async function findLog(env: AgentFleet["env"], session: FleetSession): Promise<string> {
  if (session.cli === "claude") {
    const folder = join(env.CLAUDE_CONFIG_DIR, "projects", encodeProjectDir(session.cwd));
    const name = (await readdir(folder)).find((n) => n.endsWith(".jsonl") && !n.startsWith("agent-"));
    if (!name) throw new Error(`no transcript in ${folder}`);
    return join(folder, name);
  }
  if (session.cli === "codex") {
    const root = join(env.CODEX_HOME, "sessions");
    const files = (await readdir(root, { recursive: true })).filter((f) => /rollout-.*\.jsonl$/.test(f));
    for (const file of files) {
      const path = join(root, file);
      if ((await readSessionMetaCwd(path)) === session.cwd) return path;
    }
    throw new Error(`no rollout for ${session.cwd}`);
  }
  throw new Error(`${session.cli} keeps no JSONL log`);
}

/** CPU ticks (USER_HZ) a process used itself and through its reaped children: `/proc/<pid>/stat` 14–17. */
export async function cpuTicks(pid: number): Promise<{ self: number; children: number }> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // fields[0] is field 3 (state): utime is field 14, stime 15, cutime 16, cstime 17.
  const n = (field: number) => Number(fields[field - 3]);
  return { self: n(14) + n(15), children: n(16) + n(17) };
}
