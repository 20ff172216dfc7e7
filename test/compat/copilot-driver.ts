import { mkdir, mkdtemp, realpath, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Cli } from "../../gen/staragent/v1/session_pb.js";
import type { TestTmux } from "../support/tmux.js";
import { type CliDriver, type PreparedCli, throwawayCli } from "./cli-driver.js";
import { COMPAT_ROOT, COPILOT_BIN } from "./installed-clis.js";
import type { RecordedRequest } from "./mock-model-server.js";
import { answerDialog, waitForScreen } from "./pane-screen.js";

/** The model id Copilot CLI is configured with; the mock echoes it. */
const COPILOT_MODEL = "mock-model";
/**
 * Where the native build unpacks its JavaScript on first run (235 MB): one folder beside the
 * installed CLI, so each throwaway HOME does not unpack it again.
 */
const UNPACK_CACHE = join(COMPAT_ROOT, "node_modules", ".cache", "staragent-copilot");
/**
 * Copilot CLI's switches for running offline against the mock (docs/compat.md, "Copilot CLI"): no
 * GitHub login, telemetry or update checks; the model is the mock's through its own provider (BYOK).
 */
const OFFLINE_SWITCHES = [
  "COPILOT_OFFLINE=true",
  "COPILOT_AUTO_UPDATE=false",
  "COPILOT_PROVIDER_TYPE=openai",
  "COPILOT_PROVIDER_API_KEY=compat",
  `COPILOT_MODEL=${COPILOT_MODEL}`,
  // A model outside its catalog otherwise gets a notice about default limits.
  "COPILOT_PROVIDER_MAX_PROMPT_TOKENS=128000",
  "COPILOT_PROVIDER_MAX_OUTPUT_TOKENS=8192",
];
/** Variables that would point Copilot CLI at other state, credentials or configuration. */
const CLEARED_VARIABLES = [
  "COPILOT_HOME",
  "XDG_CONFIG_HOME",
  "XDG_STATE_HOME",
  "GH_TOKEN",
  "GITHUB_TOKEN",
  "COPILOT_GITHUB_TOKEN",
];
/** The footer of the input box once it takes typing. */
const READY_FOOTER = "/ commands";
/** The approval dialog's question. */
const APPROVAL_QUESTION = "Do you want to run this command?";
/**
 * Copilot CLI interrupts a turn on Escape pressed twice, as two keys: sent in one write they read
 * as Alt-Escape and nothing happens. This gap between them is a person's double press.
 */
const DOUBLE_ESCAPE_GAP_MS = 250;
/** How long Copilot CLI may take to settle after an interrupt or a refused approval. */
const INTERRUPT_TIMEOUT_MS = 10_000;
/** Double presses of Escape before an interrupt counts as not taken. */
const INTERRUPT_ATTEMPTS = 2;
/** The footer while a turn runs or is being cancelled (Enter typed then may be lost). */
const BUSY_FOOTER = /^\s*[○◎◉●]\s+(?:Working|Cancelling)\b/m;
/** The footer at rest, with the input box empty (`/ commands`) or not (`@ files`). */
const RESTING_FOOTER = /Interactive · Manual Approval/;

/**
 * Waits until the footer is at rest again: keys typed while it still says `Cancelling` can be lost
 * (an Enter then left the next prompt in the input box).
 */
async function settled(tmux: TestTmux, target: string, what: string): Promise<void> {
  await waitForScreen(
    tmux,
    target,
    (s) => RESTING_FOOTER.test(s) && !BUSY_FOOTER.test(s),
    `Copilot CLI at rest after ${what}`,
    INTERRUPT_TIMEOUT_MS,
  );
}

/**
 * The real GitHub Copilot CLI TUI, offline (`COPILOT_OFFLINE`) against the mock's Chat Completions
 * API. The working folder is trusted in its `config.json` beforehand, so the folder trust dialog is
 * not in the way (the fixtures cover that dialog).
 */
export const copilotDriver: CliDriver = {
  sessionPrefix: "compat-copilot",
  bin: COPILOT_BIN,
  version: "1.0.102",
  label: "Copilot CLI 1.0.102",
  cli: Cli.COPILOT,
  model: COPILOT_MODEL,
  sideReply: () => undefined,
  async prepare(mockBaseUrl: string): Promise<PreparedCli> {
    const home = await mkdtemp(join(tmpdir(), "sa-compat-copilot-home-"));
    const cwd = await realpath(await mkdtemp(join(tmpdir(), "sa-compat-copilot-work-")));
    await mkdir(join(home, ".copilot"), { recursive: true });
    await writeFile(join(home, ".copilot", "config.json"), JSON.stringify({ trustedFolders: [cwd] }));
    await mkdir(UNPACK_CACHE, { recursive: true });
    const command = [
      "env",
      ...CLEARED_VARIABLES.flatMap((v) => ["-u", v]),
      `HOME=${home}`,
      `XDG_CACHE_HOME=${UNPACK_CACHE}`,
      `COPILOT_PROVIDER_BASE_URL=${mockBaseUrl}`,
      ...OFFLINE_SWITCHES,
      COPILOT_BIN,
    ];
    return throwawayCli(home, cwd, command, ["--continue"]);
  },
  isReady: (screen) => screen.includes(READY_FOOTER),
  approvalToolCall: (command) => ({
    name: "bash",
    arguments: { command, description: "Write the compat check's marker file" },
  }),
  isToolResult: (request) => messages(request).some((m) => field(m, "role") === "tool"),
  approvalQuestion: APPROVAL_QUESTION,
  async approve(tmux, target) {
    // "1. Yes" is the selected choice: Enter confirms it.
    await answerDialog(tmux, target, APPROVAL_QUESTION, "Enter");
  },
  async interrupt(tmux, target) {
    // On a loaded machine (a full compat run, three CLIs at once) the turn once ran on after the two
    // presses, twice in one run, as if they were read together; a person then presses twice again.
    for (let attempt = 1; ; attempt++) {
      await tmux.run("send-keys", "-t", target, "Escape");
      await new Promise((r) => setTimeout(r, DOUBLE_ESCAPE_GAP_MS));
      await tmux.run("send-keys", "-t", target, "Escape");
      try {
        await settled(tmux, target, "Escape Escape");
        return;
      } catch (err) {
        const screen = await tmux.run("capture-pane", "-p", "-t", target);
        if (attempt >= INTERRUPT_ATTEMPTS || /\bCancelling\b/.test(screen)) throw err;
      }
    }
  },
  async cancelApproval(tmux, target) {
    await answerDialog(tmux, target, APPROVAL_QUESTION, "Escape");
    await settled(tmux, target, "Escape on the approval");
  },
  async clearInput(tmux, target) {
    // Escape Escape before any output puts the prompt back into the input box; Ctrl-U empties it.
    await tmux.run("send-keys", "-t", target, "C-u");
    await waitForScreen(tmux, target, (s) => /^❯\s*$/m.test(s), "an empty input box", INTERRUPT_TIMEOUT_MS);
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
