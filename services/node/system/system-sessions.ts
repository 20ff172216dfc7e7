import { chmod, mkdir } from "node:fs/promises";
import { sleep } from "../../common/async-queue.js";
import { SECRET_VARIABLES } from "../../common/config.js";
import { NEXT_COMMAND, sessionTarget, type TmuxClient } from "../tmux/client.js";
import { recordFormat } from "../tmux/format-records.js";
import { ORIGIN_OPTION } from "../tmux/panes.js";
import { EXEC_ARGV_PREFIX } from "../tmux/sessions.js";
import { parseSupervision, SUPERVISION_OPTION, type SupervisionRecord } from "../tmux/supervision-record.js";
import { putLaunchSecrets } from "./launch-secrets.js";
import { DEFAULT_RESTART_TIMINGS, type RestartTimings, timingFlags } from "./supervisor.js";
import { pathExists, planTailscaled, probeTailscaledHost, type TailscaledProbePaths } from "./tailscaled.js";

/** StarAgent's own services, each run in its tmux session by `staragent system`. */
export const SYSTEM_SERVICES = ["hub", "node", "tailscaled"] as const;
/** One of StarAgent's own services. */
export type SystemService = (typeof SYSTEM_SERVICES)[number];

/** The tmux session a service runs in (the Machine shows these as type SYSTEM; the API never stops them). */
export function systemSessionName(service: SystemService): string {
  return `staragent-${service}`;
}

/**
 * How long `start` waits for a service to come up (the Hub or Node to say where it listens,
 * tailscaled to open its socket) before reporting it as started but not yet ready. A Hub starts in
 * about half a second; a loaded 2-core machine can take several.
 */
const START_TIMEOUT_MS = 20_000;
/** How long `stop` waits for a service to end after SIGTERM (a Hub lets its viewers go in about 2 s). */
const STOP_TIMEOUT_MS = 10_000;
/**
 * How long `start` waits for the exit status of a service that exited at once: tmux marks the pane
 * dead when its output ends and learns the status when it reaps the process, a moment later (tmux
 * 3.3a sometimes reaps it only at its next SIGCHLD: then the message goes without the status).
 */
const EXIT_STATUS_WAIT_MS = 2_000;
/** How often start and stop look at the pane while they wait. */
const POLL_MS = 100;
/** Lines of a pane's output shown when its service exited. */
const LAST_LINES = 15;
/** Lines of a pane searched for where a Hub or Node listens (it prints that once, near the top). */
const LISTEN_SEARCH_LINES = 2_000;
/** The size of a system session's window: room for log lines. */
const WINDOW = { cols: 200, rows: 50 } as const;

/**
 * Variables a service gets from the caller's environment through tmux (`new-session -e`), so it runs
 * with them whatever environment the tmux server was started with. Only variables without secrets:
 * tmux's command line shows in `ps`. Secrets (SECRET_VARIABLES) go through a file instead.
 */
const PASSED_VARIABLES = [
  "STARAGENT_TMUX_SOCKET",
  "STARAGENT_LOG_LEVEL",
  "STARAGENT_ORIGINS",
  "STARAGENT_URL",
  "NODE_EXTRA_CA_CERTS",
  "NODE_OPTIONS",
  "PATH",
  "HOME",
  "LANG",
  "LC_ALL",
] as const;

/** A service's state, from its tmux session. */
export interface SystemState {
  readonly service: SystemService;
  readonly session: string;
  /** `running`: the session's process lives; `exited`: it ended and its pane is kept; `stopped`: no session. */
  readonly state: "running" | "exited" | "stopped";
  readonly pid?: number;
  readonly exitStatus?: number;
  /** When the session was started. */
  readonly since?: Date;
  /** Where a Hub or Node said it listens. */
  readonly url?: string;
  /** The end of its output, when it exited. */
  readonly lastLines?: readonly string[];
  /** What the session's supervisor recorded: restarts, the last exit and its output. */
  readonly supervision?: SupervisionRecord;
}

/** What `start` did. */
export interface StartOutcome {
  /** False when the service was already running and nothing was changed. */
  readonly started: boolean;
  readonly state: SystemState;
  /** Further lines for the person (how to log tailscaled in, a replaced exited session). */
  readonly notes: readonly string[];
}

/** A failure to start or stop a service, with what to tell the person. */
export class SystemError extends Error {}

/** What SystemSessions works with. */
export interface SystemSessionsOptions {
  readonly tmux: TmuxClient;
  /** `$STARAGENT_HOME` (absolute): the services' state, and where secrets wait for them. */
  readonly home: string;
  /** The argv that runs this `staragent` (node, its options, the script): a Hub or Node session runs it. */
  readonly launcher: readonly string[];
  /** The caller's environment: PASSED_VARIABLES and SECRET_VARIABLES are taken from it. */
  readonly env: NodeJS.ProcessEnv;
  /** Where to look for tailscaled, a TUN device and systemd. */
  readonly probePaths: TailscaledProbePaths;
  /** How the sessions' supervisors pace restarts (DEFAULT_RESTART_TIMINGS; tests shorten them). */
  readonly restartTimings?: RestartTimings;
}

/**
 * Runs StarAgent's own services (`staragent hub`, `staragent node`, tailscaled) each in its tmux
 * session on this machine's tmux server, so they survive the terminal that started them, show in
 * the dashboard as type SYSTEM with a live terminal, and are found, reported and stopped by name.
 * Every operation is idempotent: starting a running service and stopping a stopped one change
 * nothing and say so. Each session runs its service under a supervisor (`staragent system
 * supervise`, supervisor.ts) that starts it again with a growing wait whenever it exits, as a person
 * expects of a service, and records why it went (exit status, last lines) where `status` and the
 * Session show it. A session whose supervisor itself ended keeps its pane (`remain-on-exit`), so
 * `status` can show why; `start` replaces it.
 */
export class SystemSessions {
  constructor(private readonly options: SystemSessionsOptions) {}

  /** The state of `service`'s session. */
  async status(service: SystemService): Promise<SystemState> {
    const session = systemSessionName(service);
    const format = recordFormat([
      "#{pane_pid}",
      "#{pane_dead}",
      "#{pane_dead_status}",
      "#{session_created}",
      `#{${SUPERVISION_OPTION}}`,
    ]);
    const output = await this.options.tmux
      .query(["list-panes", "-t", sessionTarget(session), "-F", format.format])
      .catch((err: unknown) => {
        if (err instanceof Error && /can't find (session|window)|no such session/i.test(err.message)) return "";
        throw err;
      });
    const [pane] = format.parse(output);
    if (!pane) return { service, session, state: "stopped" };
    const [pid, dead, status, created, recorded] = pane;
    const since = new Date(Number(created) * 1000);
    const screen = await this.screen(session);
    const url = service === "tailscaled" ? undefined : listeningUrl(screen);
    const supervision = parseSupervision(recorded ?? "");
    if (dead === "1") {
      return {
        service,
        session,
        state: "exited",
        since,
        url,
        exitStatus: status === "" ? undefined : Number(status),
        lastLines: lastLines(screen),
        supervision,
      };
    }
    return { service, session, state: "running", pid: Number(pid), since, url, supervision };
  }

  /**
   * Starts `service` in its session with `args` (passed to `staragent hub|node`, or to tailscaled),
   * unless it runs already. Waits until it is up (a Hub or Node says where it listens, tailscaled
   * opens its socket). Throws SystemError when it cannot start or exits at once (with its output).
   */
  async start(
    service: SystemService,
    args: readonly string[],
    options: { forceUserspace?: boolean } = {},
  ): Promise<StartOutcome> {
    const notes: string[] = [];
    const before = await this.status(service);
    if (before.state === "running") return { started: false, state: before, notes };
    const launch = await this.plan(service, args, options.forceUserspace === true);
    await mkdir(this.options.home, { recursive: true, mode: 0o700 });
    if (before.state === "exited") {
      await this.kill(before.session);
      notes.push(
        `replaced the session of the ${service} that had exited${before.exitStatus === undefined ? "" : ` (status ${before.exitStatus})`}`,
      );
    }
    if (service !== "tailscaled") await putLaunchSecrets(this.options.home, service, launch.secrets);
    const session = systemSessionName(service);
    try {
      await this.options.tmux.run(
        [
          "new-session",
          "-d",
          "-s",
          session,
          "-x",
          String(WINDOW.cols),
          "-y",
          String(WINDOW.rows),
          ...Object.entries(launch.env).flatMap(([name, value]) => ["-e", `${name}=${value}`]),
          "--",
          ...EXEC_ARGV_PREFIX,
          ...this.options.launcher,
          "system",
          "supervise",
          service,
          ...timingFlags(this.options.restartTimings ?? DEFAULT_RESTART_TIMINGS),
          "--",
          ...launch.argv,
          NEXT_COMMAND,
          "set-option",
          "-w",
          "-t",
          `${sessionTarget(session)}:`,
          "remain-on-exit",
          "on",
          NEXT_COMMAND,
          "set-option",
          "-t",
          `${sessionTarget(session)}:`,
          ORIGIN_OPTION,
          "system",
        ],
        { cwd: this.options.home },
      );
    } catch (err) {
      if (err instanceof Error && /duplicate session/i.test(err.message)) {
        // Started by someone else meanwhile: it runs, and this start changed nothing.
        return { started: false, state: await this.status(service), notes };
      }
      throw err;
    }
    const state = await this.waitUntilUp(service, launch.ready);
    if (state.state !== "running") {
      await this.kill(session);
      throw new SystemError(
        [
          `${session} exited at once${state.exitStatus === undefined ? "" : ` (status ${state.exitStatus})`}; its last output:`,
          ...(state.lastLines ?? []).map((l) => `  ${l}`),
        ].join("\n"),
      );
    }
    notes.push(...launch.notes);
    return { started: true, state, notes };
  }

  /**
   * Stops `service`: SIGTERM to its process (Hubs and Nodes end their streams cleanly), then its
   * session goes. Returns the state it was in (`stopped` when there was nothing to stop).
   */
  async stop(service: SystemService): Promise<SystemState> {
    const before = await this.status(service);
    if (before.state === "stopped") return before;
    if (before.state === "running" && before.pid !== undefined) {
      try {
        process.kill(before.pid, "SIGTERM");
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ESRCH") throw err;
      }
      const deadline = Date.now() + STOP_TIMEOUT_MS;
      while (Date.now() < deadline && (await this.status(service)).state === "running") await sleep(POLL_MS);
    }
    // Whatever is left (a process that ignored SIGTERM) gets tmux's SIGHUP with the session.
    await this.kill(before.session);
    return before;
  }

  private async plan(service: SystemService, args: readonly string[], forceUserspace: boolean) {
    const { env, home } = this.options;
    const passed: Record<string, string> = { STARAGENT_HOME: home };
    for (const name of PASSED_VARIABLES) {
      const value = env[name];
      if (value !== undefined && value !== "") passed[name] = value;
    }
    if (service === "tailscaled") {
      const host = await probeTailscaledHost(this.options.probePaths);
      const plan = planTailscaled(host, home, args, forceUserspace);
      if (!plan.ok) throw new SystemError(plan.message);
      await mkdir(plan.stateDir, { recursive: true, mode: 0o700 });
      await chmod(plan.stateDir, 0o700);
      const socket = plan.socket;
      return {
        argv: plan.argv,
        env: passed,
        secrets: {},
        ready: () => pathExists(socket),
        notes: [
          `userspace networking; state and socket in ${plan.stateDir}`,
          `log this machine in to your tailnet: tailscale --socket=${socket} up`,
        ],
      };
    }
    const secrets: Record<string, string> = {};
    for (const name of SECRET_VARIABLES) {
      const value = env[name];
      if (value !== undefined && value !== "") secrets[name] = value;
    }
    return {
      argv: [...this.options.launcher, "system", "run", service, ...args],
      env: passed,
      secrets,
      ready: async () => false,
      notes: [] as string[],
    };
  }

  /**
   * Waits until the service is up (or at most START_TIMEOUT_MS), or until its process ended (and then
   * for its exit status, which tmux learns a moment after the pane's output ends).
   */
  private async waitUntilUp(service: SystemService, ready: () => Promise<boolean>): Promise<SystemState> {
    const deadline = Date.now() + START_TIMEOUT_MS;
    let exitedAt: number | undefined;
    for (;;) {
      const state = await this.status(service);
      const exit = state.supervision;
      if (exit?.lastExitAt !== undefined) {
        // The service exited before it was up: that is an exit at once, whatever the supervisor would do next.
        return { ...state, state: "exited", exitStatus: exit.lastExitStatus, lastLines: exit.lastLines };
      }
      if (state.state === "exited") {
        exitedAt ??= Date.now();
        if (state.exitStatus !== undefined || Date.now() - exitedAt >= EXIT_STATUS_WAIT_MS) return state;
      } else if (state.state !== "running" || state.url !== undefined || (await ready())) {
        return state;
      }
      if (Date.now() >= deadline) return state;
      await sleep(POLL_MS);
    }
  }

  private async screen(session: string): Promise<string[]> {
    const text = await this.options.tmux
      .query(["capture-pane", "-p", "-J", "-S", `-${LISTEN_SEARCH_LINES}`, "-t", `${sessionTarget(session)}:`])
      .catch(() => "");
    return text.split("\n");
  }

  private async kill(session: string): Promise<void> {
    await this.options.tmux.run(["kill-session", "-t", sessionTarget(session)]).catch((err: unknown) => {
      if (err instanceof Error && /can't find (session|window)|no such session|no server running/i.test(err.message))
        return;
      throw err;
    });
  }
}

/** Where a Hub or Node said it listens (`... listening on URL`), from its pane. */
function listeningUrl(lines: readonly string[]): string | undefined {
  for (const line of [...lines].reverse()) {
    const match = /listening on (https?:\/\/\S+)/.exec(line);
    if (match?.[1]) return match[1];
  }
  return undefined;
}

/** The last non-empty lines of a pane, without tmux's own "Pane is dead" line. */
function lastLines(lines: readonly string[]): string[] {
  const kept = lines.filter((l) => l.trim() !== "" && !/^Pane is dead/.test(l));
  return kept.slice(-LAST_LINES);
}
