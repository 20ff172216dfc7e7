import { resolve } from "node:path";
import { readEnvironment, withoutSecrets } from "../../common/config.js";
import { TmuxClient } from "../tmux/client.js";
import {
  SYSTEM_SERVICES,
  SystemError,
  type SystemService,
  SystemSessions,
  type SystemState,
  systemSessionName,
} from "./system-sessions.js";
import { defaultProbePaths } from "./tailscaled.js";

const USAGE = [
  "usage: staragent system start hub|node|tailscaled [ARGS...]",
  "       staragent system stop hub|node|tailscaled",
  "       staragent system status [hub|node|tailscaled]",
  "ARGS go to 'staragent hub', 'staragent node' or tailscaled as they are (tailscaled: --userspace",
  "forces userspace networking). Tokens come from the environment or $STARAGENT_HOME, never from ARGS.",
].join("\n");

/** Exit code of `status SERVICE` when the service is not running (as LSB init scripts say it). */
const EXIT_NOT_RUNNING = 3;

/**
 * `staragent system start|stop|status`: the composition root of system sessions. `launcher` is the
 * argv that runs this same `staragent` (the Hub's and Node's sessions run `staragent system run`).
 * Prints what it did; returns the exit code (2 for usage errors, 1 for failures).
 */
export async function runSystemCommand(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  launcher: readonly string[],
): Promise<number> {
  const [verb, name, ...rest] = argv;
  const service = SYSTEM_SERVICES.find((s) => s === name);
  const config = readEnvironment(env);
  const sessions = new SystemSessions({
    // Never the secrets: a tmux server started by this client takes its environment as every pane's.
    tmux: new TmuxClient({ socketName: config.tmuxSocket, env: withoutSecrets(env) }),
    home: resolve(config.home),
    launcher,
    env,
    probePaths: defaultProbePaths(env.PATH ?? ""),
  });
  try {
    if (verb === "status" && name === undefined) {
      for (const s of SYSTEM_SERVICES) process.stdout.write(describe(await sessions.status(s)));
      return 0;
    }
    if (!service || (verb !== "start" && rest.length > 0)) return usage(`${name ?? ""}`);
    if (verb === "status") {
      const state = await sessions.status(service);
      process.stdout.write(describe(state));
      return state.state === "running" ? 0 : EXIT_NOT_RUNNING;
    }
    if (verb === "start") {
      const args = rest[0] === "--" ? rest.slice(1) : rest;
      const forceUserspace = service === "tailscaled" && args.includes("--userspace");
      const outcome = await sessions.start(
        service,
        args.filter((a) => !(forceUserspace && a === "--userspace")),
        { forceUserspace },
      );
      const { state } = outcome;
      const where = state.url === undefined ? "" : `: listening on ${state.url}`;
      process.stdout.write(
        outcome.started
          ? `started ${state.session} (pid ${state.pid})${where}\n`
          : `${state.session} is already running (pid ${state.pid})${where}; nothing changed\n`,
      );
      for (const note of outcome.notes) process.stdout.write(`  ${note}\n`);
      return 0;
    }
    if (verb === "stop") {
      const before = await sessions.stop(service);
      const session = systemSessionName(service);
      process.stdout.write(
        before.state === "stopped"
          ? `${session} is not running; nothing to stop\n`
          : before.state === "exited"
            ? `${session} had exited${status(before)}; removed its session\n`
            : `stopped ${session} (pid ${before.pid})\n`,
      );
      return 0;
    }
    return usage(verb ?? "");
  } catch (err) {
    if (err instanceof SystemError) {
      process.stderr.write(`staragent system ${verb} ${service}: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}

function usage(what: string): number {
  process.stderr.write(`${what ? `staragent system: unknown service or command '${what}'\n` : ""}${USAGE}\n`);
  return 2;
}

function status(state: SystemState): string {
  return state.exitStatus === undefined ? "" : ` (status ${state.exitStatus})`;
}

/** What the supervisor of a running session did: restarts, the last exit and the output before it. */
function supervised(state: SystemState): string[] {
  const s = state.supervision;
  if (!s || s.lastExitAt === undefined) return [];
  const exited = `exited with status ${s.lastExitStatus} at ${new Date(s.lastExitAt).toISOString()}`;
  const restarts = `restarted ${s.restarts} ${s.restarts === 1 ? "time" : "times"}`;
  const head =
    s.nextStartAt !== undefined
      ? `  ${exited}; starting it again in ${Math.max(0, Math.ceil((s.nextStartAt - Date.now()) / 1000))} s (${restarts} so far); its last output:`
      : `  ${restarts}; it last ${exited}; its last output then:`;
  return [head, ...(s.lastLines ?? []).map((l) => `    ${l}`)];
}

/** One line (and, for an exited service, its last output) for `status`. */
function describe(state: SystemState): string {
  const since = state.since ? ` since ${state.since.toISOString()}` : "";
  const where = state.url === undefined ? "" : `, ${state.url}`;
  switch (state.state) {
    case "running":
      return [`${state.session}: running (pid ${state.pid}${since}${where})`, ...supervised(state), ""].join("\n");
    case "stopped":
      return `${state.session}: not running\n`;
    case "exited":
      return [
        `${state.session}: exited${status(state)}; 'staragent system start ${state.service}' starts it again; its last output:`,
        ...(state.lastLines ?? []).map((l) => `  ${l}`),
        "",
      ].join("\n");
  }
}

/** The service a `staragent system run` names, if it is one whose process is `staragent` itself. */
export function runnableService(name: string | undefined): Extract<SystemService, "hub" | "node"> | undefined {
  return name === "hub" || name === "node" ? name : undefined;
}
