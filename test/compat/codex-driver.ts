import { spawn } from "node:child_process";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Cli, SessionStatus, StatusReason } from "../../gen/staragent/v1/session_pb.js";
import { waitFor } from "../support/wait.js";
import { tellInsteadStep } from "./answer-steps.js";
import type { CliDriver, CliStep, PreparedCli } from "./cli-driver.js";
import { CODEX_BIN } from "./installed-clis.js";
import type { RecordedRequest } from "./mock-model-server.js";
import { isRunning, listProcesses } from "./process-tree.js";
import { within } from "./within.js";

/** The model id Codex is configured with; the mock echoes it. */
const CODEX_MODEL = "mock-model";
/** Variables that would point Codex at another state folder than the throwaway HOME. */
const CLEARED_VARIABLES = ["CODEX_HOME", "OPENAI_API_KEY", "OPENAI_BASE_URL", "XDG_CONFIG_HOME", "XDG_DATA_HOME"];
/** The footer Codex draws once it takes input; keys typed before it are lost. */
const READY_FOOTER = "← for agents";
/** Longest `codex app-server daemon stop` may take before cleanup moves on to killing by pid. */
const DAEMON_STOP_TIMEOUT_MS = 10_000;
/** How long Codex lets a command run before returning to the model: longer than any step waits. */
const SLOW_COMMAND_YIELD_MS = 120_000;
/** How long a killed leftover may take to go away. */
const LEFTOVER_EXIT_TIMEOUT_MS = 5_000;

/** Longest wait for Codex to send a request to the mock model. */
const STEER_REQUEST_TIMEOUT_MS = 60_000;

/** Steps only Codex has. */
const CODEX_STEPS: readonly CliStep[] = [
  {
    title: "confirms a follow-up sent while it works, which Codex steers into the running turn",
    async run(step) {
      // The model holds its first answer; the follow-up makes Codex ask again, within the same turn.
      const held = step.mock.enqueue({ text: "First answer.", hold: true });
      const steered = step.mock.enqueue({ text: "Answer with the follow-up." });
      await step.type(`start a turn to steer ${step.instance.sessionId}`);
      await within(held.requested, STEER_REQUEST_TIMEOUT_MS, "Codex to ask the model");
      await step.expect(
        "the turn running",
        (s) => s.status === SessionStatus.WORKING && s.statusReason === StatusReason.ACTIVE_TURN,
      );
      const sent = await step.hub.sendChatMessage({ name: step.instance.name, text: "and mind the tests" });
      if (!sent.confirmed || !sent.confirmationDetail.includes("steered it into the running turn"))
        throw new Error(`the follow-up: ${JSON.stringify(sent)}`);
      const request = await within(steered.requested, STEER_REQUEST_TIMEOUT_MS, "Codex to ask with the follow-up");
      if (!JSON.stringify(request.body).includes("and mind the tests"))
        throw new Error("the model was not sent the follow-up");
      held.release();
      const done = await step.expect(
        "the one turn done",
        (s) => s.statusReason === StatusReason.UNSEEN_COMPLETION && s.completionId !== "",
      );
      step.recordCompletion(done.completionId);
      await step.markSeen(done.completionId);
    },
  },
];

/** The real Codex TUI, configured for the mock through `$HOME/.codex/config.toml`. */
export const codexDriver: CliDriver = {
  sessionPrefix: "compat-codex",
  bin: CODEX_BIN,
  version: "0.171.0",
  label: "Codex 0.171.0",
  cli: Cli.CODEX,
  model: CODEX_MODEL,
  sideReply(request: RecordedRequest) {
    // Codex names each new thread with a separate request that wants `{"title": ...}` JSON back.
    return threadSource(request) === "thread_title" ? { text: JSON.stringify({ title: "Compat check" }) } : undefined;
  },
  async prepare(mockBaseUrl: string): Promise<PreparedCli> {
    const home = await mkdtemp(join(tmpdir(), "sa-compat-codex-home-"));
    const cwd = await realpath(await mkdtemp(join(tmpdir(), "sa-compat-codex-work-")));
    await mkdir(join(home, ".codex"));
    await writeFile(join(home, ".codex", "config.toml"), codexConfig(mockBaseUrl, cwd));
    const env = { HOME: home, COMPAT_MOCK_API_KEY: "compat" };
    const command = [
      "env",
      ...CLEARED_VARIABLES.flatMap((v) => ["-u", v]),
      ...Object.entries(env).map(([k, v]) => `${k}=${v}`),
      CODEX_BIN,
    ];
    return {
      home,
      cwd,
      command,
      resumeCommand: [...command, "resume", "--last"],
      backgroundPids: () => daemonPids(home),
      cleanup: async () => {
        await stopDaemon(home, cwd);
        await rm(home, { recursive: true, force: true });
        await rm(cwd, { recursive: true, force: true });
      },
    };
  },
  isReady: (screen) => screen.includes(READY_FOOTER),
  approvalToolCall: execCall,
  // Codex offers no plain "No": its refusal is "No, and tell Codex what to do differently".
  ownSteps: [...CODEX_STEPS, tellInsteadStep("codex", execCall)],
  isToolResult: carriesToolOutput,
  approvalQuestion: "Would you like to run the following command?",
  async approve(tmux, target) {
    await tmux.run("send-keys", "-t", target, "y");
  },
  async interrupt(tmux, target) {
    await tmux.run("send-keys", "-t", target, "Escape");
  },
  async cancelApproval(tmux, target) {
    await tmux.run("send-keys", "-t", target, "Escape");
  },
};

/** The exec_command call that makes Codex ask before running `command` (outside its sandbox). */
function execCall(command: string) {
  return {
    name: "exec_command",
    arguments: {
      cmd: command,
      sandbox_permissions: "require_escalated",
      justification: "Do you want to let the compat check write its marker file?",
      // Without it Codex hands a still-running command back to the model after 10 s.
      yield_time_ms: SLOW_COMMAND_YIELD_MS,
    },
  };
}

/**
 * The `thread_source` Codex puts in each request's turn metadata (`client_metadata` key
 * `x-codex-turn-metadata`, a JSON string): `user` for turns, `thread_title` for title requests.
 */
function threadSource(request: RecordedRequest): string | undefined {
  const metadata = field(request.body, "client_metadata");
  const turn = field(metadata, "x-codex-turn-metadata");
  if (typeof turn !== "string") return undefined;
  const source = field(JSON.parse(turn), "thread_source");
  return typeof source === "string" ? source : undefined;
}

/** True for the request that carries a tool's output back to the model. */
function carriesToolOutput(request: RecordedRequest): boolean {
  const input = field(request.body, "input");
  return Array.isArray(input) && input.some((item) => field(item, "type") === "function_call_output");
}

function field(value: unknown, key: string): unknown {
  return typeof value === "object" && value !== null && key in value
    ? (value as Record<string, unknown>)[key]
    : undefined;
}

function codexConfig(mockBaseUrl: string, cwd: string): string {
  return [
    `model = "${CODEX_MODEL}"`,
    `model_provider = "mock"`,
    `approval_policy = "on-request"`,
    `sandbox_mode = "workspace-write"`,
    "check_for_update_on_startup = false",
    "",
    "[analytics]",
    "enabled = false",
    "",
    "[model_providers.mock]",
    `name = "Compat mock"`,
    `base_url = "${mockBaseUrl}"`,
    `env_key = "COMPAT_MOCK_API_KEY"`,
    `wire_api = "responses"`,
    "",
    `[projects."${cwd}"]`,
    `trust_level = "trusted"`,
    "",
  ].join("\n");
}

/**
 * The processes Codex started outside the pane: the app-server daemon and its pid-update loop run a
 * binary that Codex copied into `$HOME/.codex/packages`, so this throwaway HOME names them exactly.
 */
function daemonPids(home: string): number[] {
  const codexHome = join(home, ".codex");
  return listProcesses()
    .filter((p) => p.state !== "Z" && p.argv.some((arg) => arg.startsWith(codexHome)))
    .map((p) => p.pid);
}

/**
 * Stops Codex's background app-server the documented way (`codex app-server daemon stop` under the
 * same HOME), then kills by pid whatever of it is left (the `pid-update-loop` survives `daemon stop`).
 */
async function stopDaemon(home: string, cwd: string): Promise<void> {
  await new Promise<void>((resolveStop) => {
    const child = spawn(CODEX_BIN, ["app-server", "daemon", "stop"], {
      cwd,
      env: { ...process.env, HOME: home, COMPAT_MOCK_API_KEY: "compat" },
      stdio: "ignore",
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), DAEMON_STOP_TIMEOUT_MS);
    child.once("error", () => {
      clearTimeout(timer);
      resolveStop();
    });
    child.once("exit", () => {
      clearTimeout(timer);
      resolveStop();
    });
  });
  const leftovers = daemonPids(home);
  for (const pid of leftovers) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  await waitFor(
    () => leftovers.every((pid) => !isRunning(pid)),
    "Codex daemon leftovers to exit",
    LEFTOVER_EXIT_TIMEOUT_MS,
  );
}
