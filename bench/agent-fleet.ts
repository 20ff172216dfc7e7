import { existsSync, writeFileSync } from "node:fs";
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
import { createBuiltInAgents } from "../services/node/agents/registry.js";
import { standIns } from "../test/support/agent-fixture-setup.js";
import { git } from "../test/support/git.js";
import { type ServerProcess, startServerProcess } from "../test/support/servers.js";
import { createTestTmux, type TestTmux } from "../test/support/tmux.js";
import { waitFor } from "../test/support/wait.js";

const STAND_INS = join(import.meta.dirname, "../test/stand-ins");
const AGENTS = join(import.meta.dirname, "../services/node/agents");
const TOKEN = "bench-fleet-token";
/**
 * The stand-ins of every CLI the registry has one for (each module's fixture setup names it), in
 * registry order: a fleet is a mix of all of them unless told which, so a new CLI's module puts it in.
 */
export const FLEET_STAND_INS = await standIns(
  AGENTS,
  createBuiltInAgents().modules.map((m) => m.name),
);
/** The stand-in commands of FLEET_STAND_INS. */
export const FLEET_CLIS: readonly string[] = FLEET_STAND_INS.map((s) => s.command);
/**
 * Sessions per shared folder: the first half of a fleet runs two instances of one CLI per folder (people
 * run several agents in one repository), the second half one per folder.
 */
const INSTANCES_PER_SHARED_FOLDER = 2;
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
  /** The stand-in's command (its module's name). */
  readonly cli: string;
  readonly cwd: string;
}

/**
 * A real Hub (or a Node, with `node`) over a private tmux server with idle stand-in agent sessions after
 * one completed turn each.
 */
export interface AgentFleet {
  /** The server process: a Hub, or the Node named in `startAgentFleet`'s options. */
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

/** The token a fleet's server accepts (as a Hub's user token, or a Node's node token). */
export const FLEET_TOKEN = TOKEN;

/**
 * Starts `count` stand-in sessions (`options.clis`, by default every CLI of FLEET_CLIS, in turn; the
 * first half two of one CLI per folder, the rest each in its own folder) under a real Hub on a private tmux socket (or a Node named
 * `options.node`, for a Hub elsewhere to reach), completes one turn in each (each with its own prompt,
 * as people type) so real native logs exist, and marks every completion seen, so the fleet ends idle.
 * With `options.cpuProfileDir` the server writes a CPU profile there when it stops (`node --cpu-prof`).
 * Cleans up everything it started when setup fails.
 */
export async function startAgentFleet(
  count: number,
  options: { node?: string; gitRepos?: boolean; clis?: readonly string[]; cpuProfileDir?: string } = {},
): Promise<AgentFleet> {
  const clis = options.clis ?? FLEET_CLIS;
  const unknown = clis.filter((c) => !FLEET_CLIS.includes(c));
  if (unknown.length > 0)
    throw new Error(`no stand-in for ${unknown.join(", ")} (there are: ${FLEET_CLIS.join(", ")})`);
  const nodeName = options.node ?? "local";
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
  // Variables that point a CLI elsewhere than $HOME: unset, so every stand-in writes under the fleet's home.
  for (const standIn of FLEET_STAND_INS) for (const name of standIn.unsetEnv) delete processEnv[name];
  const tmux = createTestTmux(processEnv);
  let hub: ServerProcess | undefined;
  const close = async () => {
    await hub?.stop();
    await tmux.close();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    hub = await startServerProcess({
      kind: options.node ? "node" : "hub",
      tmuxSocket: tmux.socketName,
      token: TOKEN,
      env: options.cpuProfileDir ? { ...processEnv, SA_CPU_PROFILE_DIR: options.cpuProfileDir } : processEnv,
      // Node takes no --cpu-prof in NODE_OPTIONS: the server's node is run with it (the folder from the
      // environment, so no path is put into the script).
      wrapper: options.cpuProfileDir
        ? ["sh", "-c", 'exec "$0" --cpu-prof --cpu-prof-dir="$SA_CPU_PROFILE_DIR" "$@"']
        : undefined,
      args: options.node ? ["--name", options.node] : [],
    });
    const client = sessionClient(hub.url);
    const sessions: FleetSession[] = [];
    const shared = Math.floor(count / 2 / INSTANCES_PER_SHARED_FOLDER) * INSTANCES_PER_SHARED_FOLDER;
    for (let i = 0; i < count; i++) {
      // Shared folders hold instances of one CLI: the group's index picks the CLI.
      const group = i < shared ? Math.floor(i / INSTANCES_PER_SHARED_FOLDER) : i;
      const cli = clis[group % clis.length] as string;
      const tmuxName = `agent-${String(i).padStart(3, "0")}`;
      const cwd = join(dir, "projects", i < shared ? `shared-${String(group).padStart(3, "0")}` : tmuxName);
      await mkdir(cwd, { recursive: true });
      // Each folder a git repository with one commit (the workspace benchmark's idle sessions).
      if (options.gitRepos && !existsSync(join(cwd, ".git"))) initRepository(cwd);
      await client.createSession({ parent: `nodes/${nodeName}`, sessionId: tmuxName, cwd, command: [cli] });
      sessions.push({ tmuxName, name: `nodes/${nodeName}/sessions/${tmuxName}`, cli, cwd });
    }
    const list = async () => (await client.listSessions({ parent: `nodes/${nodeName}`, pageSize: PAGE_SIZE })).sessions;
    const all = (sessionsNow: Session[], reason: StatusReason) =>
      sessionsNow.length === count && sessionsNow.every((s) => s.statusReason === reason);
    await waitFor(async () => all(await list(), StatusReason.NO_TURN), "every stand-in started", SETUP_TIMEOUT_MS, 500);
    for (const s of sessions) {
      await tmux.run("send-keys", "-t", `=${s.tmuxName}:`, "-l", firstPrompt(s));
      await tmux.run("send-keys", "-t", `=${s.tmuxName}:`, "Enter");
    }
    let last: Session[] = [];
    const done = await waitFor(
      async () => {
        last = await list();
        return all(last, StatusReason.UNSEEN_COMPLETION) && last;
      },
      "one completed turn in every session",
      SETUP_TIMEOUT_MS,
      500,
    ).catch((err: Error) => {
      const behind = last.filter((s) => s.statusReason !== StatusReason.UNSEEN_COMPLETION);
      const lines = behind.map((s) => `${s.tmuxSession}: ${StatusReason[s.statusReason]} (${s.statusDetail})`);
      throw new Error(`${err.message}; not done:\n${lines.join("\n")}`);
    });
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

/** The first prompt typed into a session: its own, so instances sharing a folder are told apart. */
function firstPrompt(session: FleetSession): string {
  return `hello from ${session.tmuxName}`;
}

/** The session's own log: the one of its folder that holds its first prompt. */
async function findLog(env: AgentFleet["env"], session: FleetSession): Promise<string> {
  let candidates: string[];
  if (session.cli === "claude") {
    const folder = join(env.CLAUDE_CONFIG_DIR, "projects", encodeProjectDir(session.cwd));
    candidates = (await readdir(folder))
      .filter((n) => n.endsWith(".jsonl") && !n.startsWith("agent-"))
      .map((n) => join(folder, n));
  } else if (session.cli === "codex") {
    const root = join(env.CODEX_HOME, "sessions");
    const files = (await readdir(root, { recursive: true })).filter((f) => /rollout-.*\.jsonl$/.test(f));
    candidates = [];
    for (const file of files) {
      const path = join(root, file);
      if ((await readSessionMetaCwd(path)) === session.cwd) candidates.push(path);
    }
  } else {
    throw new Error(`${session.cli} keeps no JSONL log`);
  }
  for (const path of candidates) {
    if ((await readFile(path, "utf8")).includes(firstPrompt(session))) return path;
  }
  throw new Error(`no log of ${session.tmuxName} in ${session.cwd}`);
}

/** CPU ticks (USER_HZ) a process used itself and through its reaped children: `/proc/<pid>/stat` 14–17. */
export async function cpuTicks(pid: number): Promise<{ self: number; children: number }> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // fields[0] is field 3 (state): utime is field 14, stime 15, cutime 16, cstime 17.
  const n = (field: number) => Number(fields[field - 3]);
  return { self: n(14) + n(15), children: n(16) + n(17) };
}

/**
 * CPU ticks of the processes a process runs now, each its own and its reaped children's, by pid: a
 * Hub's long-lived helpers (the pane lister's shell), whose own children (the `tmux` clients it
 * starts) count in its ticks, not in the Hub's.
 */
export async function childTicks(pid: number): Promise<Map<number, number>> {
  const ticks = new Map<number, number>();
  for (const tid of await readdir(`/proc/${pid}/task`).catch(() => [] as string[])) {
    const children = await readFile(`/proc/${pid}/task/${tid}/children`, "utf8").catch(() => "");
    for (const child of children.split(" ").filter((c) => c !== "")) {
      const t = await cpuTicks(Number(child)).catch(() => undefined);
      if (t) ticks.set(Number(child), t.self + t.children);
    }
  }
  return ticks;
}

/** The ticks children present at both readings used between them (one that ended meanwhile is lost). */
export function childTicksSince(before: Map<number, number>, after: Map<number, number>): number {
  let sum = 0;
  for (const [pid, ticks] of after) if (before.has(pid)) sum += ticks - (before.get(pid) ?? 0);
  return sum;
}

/**
 * CPU ticks (utime+stime) of each thread of a process (`/proc/<pid>/task/*`): the main thread (the
 * JavaScript one, whose id is the process's) apart, the others summed by thread name.
 */
export async function threadTicks(pid: number): Promise<Map<string, number>> {
  const byName = new Map<string, number>();
  for (const tid of await readdir(`/proc/${pid}/task`).catch(() => [] as string[])) {
    const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, "utf8").catch(() => "");
    if (stat === "") continue;
    const name = tid === String(pid) ? "main" : `other: ${stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"))}`;
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[14 - 3]) + Number(fields[15 - 3]);
    byName.set(name, (byName.get(name) ?? 0) + ticks);
  }
  return byName;
}

/** Per thread name, the ticks between two threadTicks readings (threads gone meanwhile are lost). */
export function threadTicksSince(before: Map<string, number>, after: Map<string, number>): [string, number][] {
  return [...after]
    .map(([name, ticks]): [string, number] => [name, ticks - (before.get(name) ?? 0)])
    .sort((a, b) => b[1] - a[1]);
}

/** `git init` and one commit of a README in `cwd`. */
function initRepository(cwd: string): void {
  writeFileSync(join(cwd, "README.md"), "# project\n");
  git(cwd, "init", "-q", "-b", "main");
  git(cwd, "add", ".");
  git(cwd, "commit", "-qm", "first");
}
