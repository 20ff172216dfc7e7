import { mkdir, mkdtemp, realpath, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Cli } from "../../gen/staragent/v1/session_pb.js";
import { type CliDriver, type PreparedCli, throwawayCli } from "./cli-driver.js";
import { QWEN_BIN } from "./installed-clis.js";
import type { RecordedRequest } from "./mock-model-server.js";
import { captureScreen, waitForScreen } from "./pane-screen.js";

/** The model id Qwen Code is configured with; the mock echoes it. */
const QWEN_MODEL = "mock-model";
/** Variables that would point Qwen Code at other state or credentials than the throwaway HOME. */
const CLEARED_VARIABLES = ["QWEN_HOME", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "DASHSCOPE_API_KEY"];
/** The input box's placeholder, drawn once Qwen Code takes input. */
const READY_PLACEHOLDER = "Type your message or @path/to/file";
/** The approval dialog's first choice, drawn once the dialog is complete. */
const APPROVAL_CHOICE = "1. Yes, allow once";
/** Qwen Code's footer while a second Escape would clear the input box. */
const CLEAR_CONFIRM = "Press Esc again to clear.";
/** Escapes tried to empty the input box, and how long each waits for Qwen Code's answer to it. */
const CLEAR_ATTEMPTS = 3;
const CLEAR_STEP_TIMEOUT_MS = 2_000;
/** How long a dialog or the input box may take to draw. */
const DIALOG_TIMEOUT_MS = 10_000;
/**
 * The words of Qwen Code's side requests, both switched off in the settings and answered if sent: the
 * background memory agent's and the follow-up suggestion's after each reply.
 */
const SIDE_REQUEST_MARKS = ["Managed memory", "[SUGGESTION MODE"];

/**
 * The real Qwen Code, configured for the Chat Completions mock through `~/.qwen/settings.json`: the
 * mock as an `openai` model provider, approvals asked (`tools.approvalMode: "default"`; its default
 * lets a classifier approve), folder trust, telemetry, updates, the background memory agent and the
 * follow-up suggestions off.
 */
export const qwenDriver: CliDriver = {
  sessionPrefix: "compat-qwen",
  bin: QWEN_BIN,
  version: "0.24.4",
  label: "Qwen Code 0.24.4",
  cli: Cli.QWEN,
  model: QWEN_MODEL,
  sideReply(request: RecordedRequest) {
    const body = JSON.stringify(request.body ?? "");
    return SIDE_REQUEST_MARKS.some((m) => body.includes(m)) ? { text: "{}" } : undefined;
  },
  async prepare(mockBaseUrl: string): Promise<PreparedCli> {
    const home = await mkdtemp(join(tmpdir(), "sa-compat-qwen-home-"));
    const cwd = await realpath(await mkdtemp(join(tmpdir(), "sa-compat-qwen-work-")));
    await mkdir(join(home, ".qwen"));
    await writeFile(join(home, ".qwen", "settings.json"), JSON.stringify(qwenSettings(mockBaseUrl)));
    const command = [
      "env",
      ...CLEARED_VARIABLES.flatMap((v) => ["-u", v]),
      `HOME=${home}`,
      "COMPAT_MOCK_API_KEY=compat",
      QWEN_BIN,
    ];
    return throwawayCli(home, cwd, command, ["--continue"]);
  },
  isReady: (screen) => screen.includes(READY_PLACEHOLDER),
  approvalToolCall: (command) => ({
    name: "run_shell_command",
    arguments: { command, description: "Write the compat marker file" },
  }),
  isToolResult: carriesToolMessage,
  approvalQuestion: "Allow execution of: 'echo'?",
  async approve(tmux, target) {
    await waitForScreen(tmux, target, (s) => s.includes(APPROVAL_CHOICE), "the approval dialog", DIALOG_TIMEOUT_MS);
    await tmux.run("send-keys", "-t", target, "Enter");
  },
  async interrupt(tmux, target) {
    await tmux.run("send-keys", "-t", target, "Escape");
  },
  async cancelApproval(tmux, target) {
    await tmux.run("send-keys", "-t", target, "Escape");
  },
  async clearInput(tmux, target) {
    // Qwen Code puts a prompt cancelled before its reply back into the input box (Ctrl-U leaves it):
    // an Escape shows `Press Esc again to clear.` for a moment, and a second one while it shows clears
    // it. The footer can come and go between two looks at the screen, so Escape is pressed again
    // (never on an empty input box) until the box is empty.
    for (let attempt = 0; attempt < CLEAR_ATTEMPTS; attempt++) {
      if ((await captureScreen(tmux, target)).includes(READY_PLACEHOLDER)) return;
      await tmux.run("send-keys", "-t", target, "Escape");
      await waitForScreen(
        tmux,
        target,
        (s) => s.includes(CLEAR_CONFIRM) || s.includes(READY_PLACEHOLDER),
        "Qwen Code to ask for a second Escape",
        CLEAR_STEP_TIMEOUT_MS,
      ).catch(() => undefined);
      const screen = await captureScreen(tmux, target);
      if (!screen.includes(CLEAR_CONFIRM)) continue;
      await tmux.run("send-keys", "-t", target, "Escape");
      // An Escape more on the emptied box would open another dialog: wait for the box to be empty.
      await waitForScreen(
        tmux,
        target,
        (s) => s.includes(READY_PLACEHOLDER),
        "the input box cleared",
        CLEAR_STEP_TIMEOUT_MS,
      ).catch(() => undefined);
    }
    await waitForScreen(tmux, target, (s) => s.includes(READY_PLACEHOLDER), "an empty input box", DIALOG_TIMEOUT_MS);
  },
};

/** True for the request that carries a tool's output back to the model (a `tool` message last). */
function carriesToolMessage(request: RecordedRequest): boolean {
  const messages = (request.body as { messages?: unknown } | undefined)?.messages;
  if (!Array.isArray(messages)) return false;
  const last = messages.at(-1) as { role?: unknown } | undefined;
  return last?.role === "tool";
}

function qwenSettings(mockBaseUrl: string): Record<string, unknown> {
  return {
    modelProviders: {
      openai: [{ id: QWEN_MODEL, name: "Compat mock", baseUrl: mockBaseUrl, envKey: "COMPAT_MOCK_API_KEY" }],
    },
    security: { auth: { selectedType: "openai" }, folderTrust: { enabled: false } },
    model: { name: QWEN_MODEL },
    general: { enableAutoUpdate: false, disableAutoUpdate: true },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    tools: { approvalMode: "default" },
    memory: { enableManagedAutoMemory: false },
    ui: { enableFollowupSuggestions: false },
    ide: { enabled: false },
  };
}
