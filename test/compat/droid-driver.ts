import { mkdir, mkdtemp, realpath, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Cli } from "../../gen/staragent/v1/session_pb.js";
import type { TestTmux } from "../support/tmux.js";
import { type CliDriver, type PreparedCli, throwawayCli } from "./cli-driver.js";
import { DROID_BIN } from "./installed-clis.js";
import type { RecordedRequest } from "./mock-model-server.js";
import { answerDialog, waitForScreen } from "./pane-screen.js";

/** The model id droid is configured with; the mock echoes it. */
const DROID_MODEL = "mock-model";
/**
 * droid's switches for running offline against the mock (docs/compat.md, "Factory droid"): airgap
 * mode (no login, no Factory API), no self-update, no system keyring.
 */
const OFFLINE_SWITCHES = [
  "FACTORY_AIRGAP_ENABLED=true",
  "FACTORY_DROID_AUTO_UPDATE_ENABLED=false",
  "FACTORY_DISABLE_KEYRING=true",
];
/** Variables that would point droid at other credentials. */
const CLEARED_VARIABLES = ["FACTORY_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"];
/** The footer above the input box once droid takes typing. */
const READY_FOOTER = "Auto (Off) · all actions require approval";
/** The approval dialog's question. */
const APPROVAL_QUESTION = "Command to approve";
/** The working line while a turn runs or is being cancelled (keys typed then may be lost). */
const BUSY_LINE = /\.\.\.\s+\((?:Press ESC to stop|Please wait)\)/;
/** The working line once the reply's first words arrived. */
const STREAMING_LINE = /Streaming\.\.\.\s+\(Press ESC to stop\)/;
/** How long droid may take to settle after an interrupt or a refused approval. */
const INTERRUPT_TIMEOUT_MS = 15_000;

async function settled(tmux: TestTmux, target: string, what: string): Promise<void> {
  await waitForScreen(
    tmux,
    target,
    (s) => s.includes(READY_FOOTER) && !BUSY_LINE.test(s),
    `droid at rest after ${what}`,
    INTERRUPT_TIMEOUT_MS,
  );
}

/**
 * The real Factory droid TUI in airgap mode against the mock's Chat Completions API, configured as
 * a custom model (`generic-chat-completion-api`) in `~/.factory/settings.json`, with the working
 * folder trusted there beforehand (the fixtures cover the trust dialog).
 */
export const droidDriver: CliDriver = {
  sessionPrefix: "compat-droid",
  bin: DROID_BIN,
  version: "0.225.2",
  label: "Factory droid 0.225.2",
  cli: Cli.DROID,
  model: DROID_MODEL,
  // The session-title request carries no tools.
  sideReply: (request) => (tools(request).length === 0 ? { text: "Mock title" } : undefined),
  async prepare(mockBaseUrl: string): Promise<PreparedCli> {
    const home = await mkdtemp(join(tmpdir(), "sa-compat-droid-home-"));
    const cwd = await realpath(await mkdtemp(join(tmpdir(), "sa-compat-droid-work-")));
    await mkdir(join(home, ".factory"), { recursive: true });
    await writeFile(join(home, ".factory", "settings.json"), JSON.stringify(droidSettings(mockBaseUrl, cwd)));
    const command = [
      "env",
      ...CLEARED_VARIABLES.flatMap((v) => ["-u", v]),
      `HOME=${home}`,
      ...OFFLINE_SWITCHES,
      DROID_BIN,
    ];
    return throwawayCli(home, cwd, command, ["--resume", "--last"]);
  },
  // droid draws a reply only once it is whole; `Streaming...` says its first words arrived.
  replyStarted: (screen) => STREAMING_LINE.test(screen),
  isReady: (screen) => screen.includes(READY_FOOTER) && !BUSY_LINE.test(screen),
  approvalToolCall: (command) => ({
    name: "Execute",
    arguments: {
      summary: "Write the compat check's marker file",
      command,
      // Without a risk level droid refuses the call ("Missing risk classification").
      riskLevel: "medium",
      riskLevelReason: "It writes a file in the working folder.",
    },
  }),
  isToolResult: (request) => {
    const last = messages(request).at(-1);
    return field(last, "role") === "tool";
  },
  approvalQuestion: APPROVAL_QUESTION,
  async approve(tmux, target) {
    // "Yes, allow" is selected when the dialog opens: Enter confirms it.
    await answerDialog(tmux, target, APPROVAL_QUESTION, "Enter");
  },
  async interrupt(tmux, target) {
    await tmux.run("send-keys", "-t", target, "Escape");
    await settled(tmux, target, "Escape");
  },
  async cancelApproval(tmux, target) {
    await answerDialog(tmux, target, APPROVAL_QUESTION, "Escape");
    await settled(tmux, target, "Escape on the approval");
  },
};

function droidSettings(mockBaseUrl: string, cwd: string): Record<string, unknown> {
  return {
    customModels: [
      {
        model: DROID_MODEL,
        displayName: "Mock Model",
        baseUrl: mockBaseUrl,
        apiKey: "sk-compat-0123456789",
        provider: "generic-chat-completion-api",
        maxOutputTokens: 8000,
      },
    ],
    autoUpdateEnabled: false,
    enableTelemetry: false,
    trustedFolders: { [cwd]: { trustedAt: new Date().toISOString() } },
  };
}

function tools(request: RecordedRequest): unknown[] {
  const list = field(request.body, "tools");
  return Array.isArray(list) ? list : [];
}

function messages(request: RecordedRequest): unknown[] {
  const list = field(request.body, "messages");
  return Array.isArray(list) ? list : [];
}

function field(value: unknown, key: string): unknown {
  return typeof value === "object" && value !== null && key in value
    ? (value as Record<string, unknown>)[key]
    : undefined;
}
