import { mkdir, mkdtemp, readFile, realpath, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Cli } from "../../gen/staragent/v1/session_pb.js";
import { type CliDriver, type PreparedCli, throwawayCli } from "./cli-driver.js";
import { PI_BIN, PI_PACKAGE } from "./installed-clis.js";
import type { RecordedRequest } from "./mock-model-server.js";
import { waitForScreen } from "./pane-screen.js";

/** The model id pi is configured with; the mock echoes it. */
const PI_MODEL = "mock-model";
/** pi's switches for running offline (docs/compat.md, "pi"): no tool downloads, version check or telemetry. */
const OFFLINE_SWITCHES = ["PI_OFFLINE=1", "PI_SKIP_VERSION_CHECK=1", "PI_TELEMETRY=0"];
/** Variables that would point pi at other state or credentials than the throwaway HOME. */
const CLEARED_VARIABLES = ["PI_CODING_AGENT_DIR", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"];
/** The footer once pi takes input: the model's name at its right end. */
const READY_FOOTER = /\(auto\)\s+mock-model\s*$/m;
/** The permission gate's question, and its key hint drawn once the dialog is complete. */
const APPROVAL_QUESTION = "Allow?";
const DIALOG_HINT = "↑↓ navigate  enter select  escape/ctrl+c cancel";
/** How long pi may take to draw the dialog after the model's tool call. */
const DIALOG_TIMEOUT_MS = 20_000;
/** The shipped example's list of dangerous commands, and the refusal it returns. */
const GATED_PATTERNS = "const dangerousPatterns = [";
const REFUSAL = 'return { block: true, reason: "Blocked by user" };';

/**
 * The permission gate pi ships as an example (pi has no approval of its own), as a person sets it up
 * to ask about every command and to stop the turn when a command is refused: its patterns get one
 * that matches any command, and its refusal aborts the turn (`ctx.abort()`) as the other CLIs' "No"
 * does. The example is read from the installed package, so its dialog is pi's own.
 */
async function permissionGate(): Promise<string> {
  const shipped = await readFile(join(PI_PACKAGE, "examples/extensions/permission-gate.ts"), "utf8");
  if (!shipped.includes(GATED_PATTERNS) || !shipped.includes(REFUSAL)) {
    throw new Error("pi's permission-gate example changed: the compat run cannot set it up to ask about every command");
  }
  return shipped.replace(GATED_PATTERNS, `${GATED_PATTERNS}/./, `).replace(REFUSAL, `ctx.abort();\n\t\t\t\t${REFUSAL}`);
}

/**
 * The real pi TUI, offline against the mock's Chat Completions API (a provider of its own in
 * `models.json`), with the permission gate extension asking before every command.
 */
export const piDriver: CliDriver = {
  sessionPrefix: "compat-pi",
  bin: PI_BIN,
  version: "0.73.1",
  label: "pi 0.73.1",
  cli: Cli.PI,
  model: PI_MODEL,
  sideReply: () => undefined,
  async prepare(mockBaseUrl: string): Promise<PreparedCli> {
    const home = await mkdtemp(join(tmpdir(), "sa-compat-pi-home-"));
    const cwd = await realpath(await mkdtemp(join(tmpdir(), "sa-compat-pi-work-")));
    const agent = join(home, ".pi", "agent");
    await mkdir(join(agent, "extensions"), { recursive: true });
    await writeFile(
      join(agent, "models.json"),
      JSON.stringify({
        providers: {
          mock: {
            baseUrl: mockBaseUrl,
            api: "openai-completions",
            apiKey: "compat",
            compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
            models: [{ id: PI_MODEL, name: "Mock Model", reasoning: false, contextWindow: 128000, maxTokens: 8000 }],
          },
        },
      }),
    );
    await writeFile(
      join(agent, "settings.json"),
      JSON.stringify({ defaultProvider: "mock", defaultModel: PI_MODEL, enableInstallTelemetry: false }),
    );
    await writeFile(join(agent, "extensions", "permission-gate.ts"), await permissionGate());
    const command = [
      "env",
      ...CLEARED_VARIABLES.flatMap((v) => ["-u", v]),
      `HOME=${home}`,
      ...OFFLINE_SWITCHES,
      PI_BIN,
    ];
    return throwawayCli(home, cwd, command, ["--continue"]);
  },
  isReady: (screen) => READY_FOOTER.test(screen),
  approvalToolCall: (command) => ({
    name: "bash",
    arguments: { command, description: "Write the compat check's marker file" },
  }),
  isToolResult: (request) => messages(request).some((m) => field(m, "role") === "tool"),
  approvalQuestion: APPROVAL_QUESTION,
  async approve(tmux, target) {
    // "→ Yes" is the selected choice: Enter picks it.
    await waitForScreen(
      tmux,
      target,
      (s) => s.includes(DIALOG_HINT),
      "the permission gate's dialog",
      DIALOG_TIMEOUT_MS,
    );
    await tmux.run("send-keys", "-t", target, "Enter");
  },
  async interrupt(tmux, target) {
    await tmux.run("send-keys", "-t", target, "Escape");
  },
  async cancelApproval(tmux, target) {
    await waitForScreen(
      tmux,
      target,
      (s) => s.includes(DIALOG_HINT),
      "the permission gate's dialog",
      DIALOG_TIMEOUT_MS,
    );
    await tmux.run("send-keys", "-t", target, "Escape");
  },
};

function messages(request: RecordedRequest): unknown[] {
  const list = field(request.body, "messages");
  return Array.isArray(list) ? list : [];
}

function field(value: unknown, key: string): unknown {
  return typeof value === "object" && value !== null && key in value
    ? (value as Record<string, unknown>)[key]
    : undefined;
}
