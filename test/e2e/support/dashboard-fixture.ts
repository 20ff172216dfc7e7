import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@connectrpc/connect";
import type { Browser, Page } from "playwright-core";
import { SessionService } from "../../../gen/staragent/v1/session_service_pb.js";
import { NEXT_COMMAND, type TmuxArgument } from "../../../services/node/tmux/client.js";
import { grpcClient, testToken } from "../../foundation/hub-fixture.js";
import { REPO_ROOT, type ServerProcess, startServerProcess } from "../../support/servers.js";
import { createTestTmux, type TestTmux } from "../../support/tmux.js";
import { waitFor } from "../../support/wait.js";
import { launchBrowser } from "./browser.js";

/** How long the sessions' programs may take to exit once their tmux server is killed. */
const PROCESS_EXIT_TIMEOUT_MS = 10_000;

/** Whether a process still runs (a zombie waiting to be reaped has finished writing). */
function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** Starting a Hub, tmux and a browser on a busy 2-core machine (other suites run too) can be slow. */
export const SETUP_TIMEOUT_MS = 90_000;

/** The stand-in agent CLIs, first on the PATH of the Hub and of its tmux server. */
export const STAND_INS = join(REPO_ROOT, "test/stand-ins");

/** A real Hub over a private tmux server, with stand-in CLIs on PATH, and a chromium to drive. */
export interface DashboardFixture {
  readonly tmux: TestTmux;
  readonly hub: ServerProcess;
  /** A scratch folder (real path) for session cwds. */
  readonly dir: string;
  /** The environment the Hub and its tmux server run with (HOME, PATH with the stand-ins). */
  readonly env: NodeJS.ProcessEnv;
  readonly browser: Browser;
  /** A SessionService client of the Hub (bearer token), for setting up and checking. */
  readonly sessions: Client<typeof SessionService>;
  /** Stops the Hub process and starts it again on the same port and home (for outage tests). */
  restartHub(during?: () => Promise<void>): Promise<void>;
  /** Logs `page` in through the Hub's printed login link and waits for the dashboard at `path`. */
  login(page: Page, path?: string): Promise<void>;
  /** Types text into a tmux pane (as keys, like a person at the terminal), then Enter. */
  typeLine(session: string, text: string, tmux?: TestTmux): Promise<void>;
  close(): Promise<void>;
}

/** What the fixture's Hub runs with. */
export interface DashboardFixtureOptions {
  /** Extra `staragent hub` arguments (`--node NAME=URL`). */
  readonly hubArgs?: string[];
  /** Extra environment for the Hub (STARAGENT_NODE_TOKEN, stand-in knobs). */
  readonly env?: NodeJS.ProcessEnv;
}

/** Starts everything a dashboard test needs; on failure stops what it started. */
export async function startDashboard(options: DashboardFixtureOptions = {}): Promise<DashboardFixture> {
  if (!(await stat(join(REPO_ROOT, "web/dist/index.html")).catch(() => undefined))) {
    throw new Error("the dashboard is not built: run 'make web' (make test does it) before the end-to-end tests");
  }
  const dir = await realpath(await mkdtemp(join(tmpdir(), "sa-e2e-")));
  const home = join(dir, "home");
  const hubHome = join(dir, "hub");
  await Promise.all([mkdir(home), mkdir(hubHome)]);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    PATH: `${STAND_INS}:${process.env.PATH}`,
    STANDIN_THINK_MS: "150",
    STANDIN_TURN_MS: "500",
    ...options.env,
  };
  delete env.CLAUDE_CONFIG_DIR;
  delete env.CODEX_HOME;
  delete env.XDG_DATA_HOME;
  delete env.TMUX;
  const tmux = createTestTmux(env);
  const token = testToken();
  let hub: ServerProcess | undefined;
  let browser: Browser | undefined;
  const start = (port = 0) =>
    startServerProcess({
      kind: "hub",
      tmuxSocket: tmux.socketName,
      token,
      home: hubHome,
      env,
      args: [...(port ? ["--port", String(port)] : []), ...(options.hubArgs ?? [])],
    });
  const cleanup = async () => {
    await browser?.close().catch(() => undefined);
    await hub?.stop();
    // The sessions' programs write into HOME as they exit (bash its history): wait for them to be gone
    // before removing the folder.
    const panePids = (await tmux.client.query(["list-panes", "-a", "-F", "#{pane_pid}"]).catch(() => ""))
      .split("\n")
      .filter((line) => /^\d+$/.test(line))
      .map(Number);
    await tmux.close();
    await waitFor(
      () => panePids.every((pid) => !isAlive(pid)),
      "the sessions' programs to exit",
      PROCESS_EXIT_TIMEOUT_MS,
    );
    await rm(dir, { recursive: true, force: true });
  };
  try {
    hub = await start();
    browser = await launchBrowser();
  } catch (err) {
    await cleanup();
    throw err;
  }
  let running: ServerProcess = hub;
  const fixture: DashboardFixture = {
    tmux,
    get hub() {
      return running;
    },
    dir,
    env,
    browser,
    sessions: grpcClient(SessionService, running.url, token),
    async restartHub(during) {
      const port = Number(new URL(running.url).port);
      await running.stop();
      await during?.();
      running = await start(port);
      hub = running;
    },
    async login(page, path = "/") {
      await page.goto(`${running.url}/login?next=${encodeURIComponent(path)}#token=${token}`);
      await page.waitForURL((url) => url.pathname === new URL(path, "http://x").pathname);
      await page.locator("sa-app header.topbar").waitFor();
    },
    async typeLine(session, text, t = tmux) {
      await t.run("send-keys", "-t", `=${session}:`, "-l", text);
      await t.run("send-keys", "-t", `=${session}:`, "Enter");
    },
    close: cleanup,
  };
  return fixture;
}

/** Runs `sh -c` scripts as sessions: `new-session` straight on the test's tmux (not through the API). */
export async function tmuxSession(t: TestTmux, name: string, cwd: string, ...command: string[]): Promise<void> {
  await t.run("new-session", "-d", "-s", name, "-x", "120", "-y", "30", "-c", cwd, "--", ...command);
}

/** Waits until the pane's visible text matches. */
export async function paneText(
  t: TestTmux,
  session: string,
  match: (text: string) => boolean,
  what: string,
): Promise<string> {
  let last = "";
  return waitFor(
    async () => {
      last = await t.run("capture-pane", "-p", "-t", `=${session}:`);
      return match(last) ? last : undefined;
    },
    () => `${what}; the pane showed last:\n${last.trimEnd()}`,
  );
}

/** The tmux arguments that create `count` idle sessions in one tmux invocation. */
export function manySessions(count: number): TmuxArgument[] {
  const args: TmuxArgument[] = [];
  for (let i = 1; i <= count; i++) {
    if (i > 1) args.push(NEXT_COMMAND);
    args.push("new-session", "-d", "-s", `bulk-${String(i).padStart(3, "0")}`, "sleep 3600");
  }
  return args;
}
