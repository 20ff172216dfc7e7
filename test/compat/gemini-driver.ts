import { mkdir, mkdtemp, realpath, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Cli } from "../../gen/staragent/v1/session_pb.js";
import { GeminiModule } from "../../services/node/agents/gemini/gemini-module.js";
import { type CliDriver, type PreparedCli, throwawayCli } from "./cli-driver.js";
import { GEMINI_BIN } from "./installed-clis.js";
import type { RecordedRequest } from "./mock-model-server.js";
import { waitForScreen } from "./pane-screen.js";

/** The model Gemini CLI is configured with (a name its model table knows); the mock echoes it. */
const GEMINI_MODEL = "gemini-2.5-flash";
/** Variables that would point Gemini CLI at other state, credentials or a sandbox than the throwaway HOME. */
const CLEARED_VARIABLES = [
  "GEMINI_CLI_HOME",
  "GOOGLE_API_KEY",
  "GOOGLE_CLOUD_PROJECT",
  "GOOGLE_GENAI_USE_VERTEXAI",
  "GOOGLE_APPLICATION_CREDENTIALS",
  "GEMINI_SANDBOX",
  "XDG_CONFIG_HOME",
];
/** The input box's placeholder, drawn once Gemini CLI takes input. */
const READY_PLACEHOLDER = "Type your message or @path/to/file";
/** The approval dialog's first choice, drawn once the dialog is complete. */
const APPROVAL_CHOICE = "1. Allow once";
/** How long the approval dialog may take to draw. */
const DIALOG_TIMEOUT_MS = 10_000;

/**
 * The real Gemini CLI, configured for the Gemini-format mock through `~/.gemini/settings.json`
 * (API-key auth, folder trust, updates, telemetry and the IDE integration off) and
 * `GOOGLE_GEMINI_BASE_URL` (the mock's root: Gemini CLI adds `/v1beta/models/...`).
 */
export const geminiDriver: CliDriver = {
  sessionPrefix: "compat-gemini",
  bin: GEMINI_BIN,
  version: "0.61.0",
  label: "Gemini CLI 0.61.0",
  cli: Cli.GEMINI,
  model: GEMINI_MODEL,
  sideReply: () => undefined,
  // An Enter within 30 ms of another key is a line break in Gemini CLI (seen: two prompts sent as one).
  submitQuietMs: new GeminiModule().submitQuietMs,
  resumeNotVerified:
    "a resumed Gemini CLI 0.61.0 sent no model request for its first prompt (resumed by id: 3 runs of 3 on 2026-12-02; docs/compat.md)",
  async prepare(mockBaseUrl: string): Promise<PreparedCli> {
    const home = await mkdtemp(join(tmpdir(), "sa-compat-gemini-home-"));
    const cwd = await realpath(await mkdtemp(join(tmpdir(), "sa-compat-gemini-work-")));
    await mkdir(join(home, ".gemini"));
    await writeFile(join(home, ".gemini", "settings.json"), JSON.stringify(geminiSettings()));
    const command = [
      "env",
      ...CLEARED_VARIABLES.flatMap((v) => ["-u", v]),
      `HOME=${home}`,
      `GOOGLE_GEMINI_BASE_URL=${mockBaseUrl.replace(/\/v1$/, "")}`,
      "GEMINI_API_KEY=compat-mock-key",
      GEMINI_BIN,
    ];
    // `--resume latest` takes the session started last (the second instance's): index 1, the
    // folder's first session, is the first instance's.
    return throwawayCli(home, cwd, command, ["--resume", "1"]);
  },
  isReady: (screen) => screen.includes(READY_PLACEHOLDER),
  approvalToolCall: (command) => ({
    name: "run_shell_command",
    arguments: { command, description: "Write the compat marker file" },
  }),
  isToolResult: carriesFunctionResponse,
  approvalQuestion: "Allow execution of [Shell]?",
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
};

/** True for the request that carries a tool's result back to the model (a `functionResponse` part). */
function carriesFunctionResponse(request: RecordedRequest): boolean {
  const contents = (request.body as { contents?: unknown } | undefined)?.contents;
  return Array.isArray(contents) && JSON.stringify(contents.at(-1) ?? null).includes('"functionResponse"');
}

function geminiSettings(): Record<string, unknown> {
  return {
    security: { auth: { selectedType: "gemini-api-key" }, folderTrust: { enabled: false } },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false, defaultApprovalMode: "default" },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    ide: { enabled: false },
    model: { name: GEMINI_MODEL },
    ui: { theme: "Default" },
  };
}
