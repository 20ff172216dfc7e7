import { mkdtemp, realpath, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Cli } from "../../gen/staragent/v1/session_pb.js";
import {
  allowAlwaysStep,
  COMPAT_EDIT_CONTENT,
  COMPAT_EDIT_FILE,
  COMPAT_FETCH_URL,
  namesEditFile,
  namesFetchUrl,
  recordAndDenyStep,
} from "./answer-steps.js";
import { type CliDriver, type PreparedCli, throwawayCli } from "./cli-driver.js";
import { OPENCODE_BIN } from "./installed-clis.js";
import type { RecordedRequest } from "./mock-model-server.js";
import { answerDialog, waitForScreen } from "./pane-screen.js";

/** The model id opencode is configured with; the mock echoes it. */
const OPENCODE_MODEL = "mock-model";
/**
 * An npm registry on a closed loopback port: opencode installs plugin packages from npm at startup
 * when it finds a config folder; pointing npm here keeps it off the network if it still tries.
 */
const CLOSED_LOOPBACK_REGISTRY = "http://127.0.0.1:9/";
/** opencode's switches for everything that would reach the network on its own (after `OPENCODE_`). */
const OFFLINE_SWITCHES = [
  "DISABLE_AUTOUPDATE=1",
  "DISABLE_MODELS_FETCH=1",
  "DISABLE_SHARE=1",
  "DISABLE_LSP_DOWNLOAD=1",
];
/**
 * Variables that would point opencode at other state or configuration than the throwaway HOME (with
 * `OPENCODE_CONFIG` and `OPENCODE_CONFIG_DIR`).
 */
const CLEARED_VARIABLES = ["XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "OPENAI_API_KEY"];
/** The input placeholder opencode draws once it takes input on a new session. */
const READY_PLACEHOLDER = "Ask anything";
/** The footer of a session's view (a resumed session shows its conversation, no placeholder). */
const READY_SESSION_FOOTER = "ctrl+p commands";
/** The footer after the first Escape of a running turn: a second one interrupts it. */
const INTERRUPT_CONFIRM = "esc again to interrupt";
/** The footer while a turn runs. */
const INTERRUPT_HINT = "esc interrupt";
/** Pairs of Escapes tried before the interrupt counts as failed. */
const INTERRUPT_ATTEMPTS = 3;
/** How long an interrupted turn's footer may take to go (the CLI stops the turn and redraws). */
const TURN_STOP_TIMEOUT_MS = 10_000;
/** The choices line of opencode's permission dialog, drawn once the dialog is complete. */
export const PERMISSION_CHOICES = "Allow once";
/**
 * How long opencode may take to ask for the second Escape: a redraw, but seconds on a loaded 2-core
 * machine, and a step that gives up early leaves the turn running under every later step.
 */
const INTERRUPT_CONFIRM_TIMEOUT_MS = 15_000;
/** The system prompt of opencode's session-title request. */
const TITLE_REQUEST_MARK = "You are a title generator";

/** The bash tool call that makes opencode ask before running `command`. */
function bashCall(command: string) {
  return { name: "bash", arguments: { command, description: "Write the compat check's marker file" } };
}

/** opencode's own steps: "Allow always" through AnswerPrompt, and its edit and fetch permissions. */
const OPENCODE_STEPS = [
  allowAlwaysStep("opencode", bashCall, { question: "Always allow", detail: "- echo *" }),
  recordAndDenyStep(
    "opencode",
    "edit",
    { name: "write", arguments: { filePath: COMPAT_EDIT_FILE, content: COMPAT_EDIT_CONTENT } },
    namesEditFile,
  ),
  recordAndDenyStep(
    "opencode",
    "fetch",
    { name: "webfetch", arguments: { url: COMPAT_FETCH_URL, format: "text" } },
    namesFetchUrl,
  ),
];

/** What a CLI on opencode's core (Kilo CLI) changes of opencode's driver. */
export interface OpencodeCoreFlavour {
  readonly name: string;
  readonly label: string;
  readonly bin: string;
  readonly version: string;
  readonly cli: Cli;
  /** The prefix of its environment variables (`OPENCODE`, `KILO`). */
  readonly envPrefix: string;
  /** Its offline switches beyond the shared ones (opencode's, under its prefix). */
  readonly extraSwitches?: readonly string[];
  readonly ownSteps?: CliDriver["ownSteps"];
  cancelApproval: CliDriver["cancelApproval"];
}

/**
 * The driver of the real opencode TUI or of a CLI on its core. Its configuration goes in
 * `<PREFIX>_CONFIG_CONTENT` rather than a file in `~/.config/<name>/`: with such a file opencode ran an
 * npm install from the public registry.
 */
export function opencodeCoreDriver(flavour: OpencodeCoreFlavour): CliDriver {
  const prefix = flavour.envPrefix;
  return {
    sessionPrefix: `compat-${flavour.name}`,
    bin: flavour.bin,
    version: flavour.version,
    label: flavour.label,
    cli: flavour.cli,
    model: OPENCODE_MODEL,
    sideReply(request: RecordedRequest) {
      return isTitleRequest(request) ? { text: "Compat check" } : undefined;
    },
    async prepare(mockBaseUrl: string): Promise<PreparedCli> {
      const home = await mkdtemp(join(tmpdir(), `sa-compat-${flavour.name}-home-`));
      const cwd = await realpath(await mkdtemp(join(tmpdir(), `sa-compat-${flavour.name}-work-`)));
      await writeFile(join(home, ".npmrc"), `registry=${CLOSED_LOOPBACK_REGISTRY}\n`);
      const command = [
        "env",
        ...[...CLEARED_VARIABLES, `${prefix}_CONFIG`, `${prefix}_CONFIG_DIR`].flatMap((v) => ["-u", v]),
        `HOME=${home}`,
        `${prefix}_CONFIG_CONTENT=${JSON.stringify(opencodeConfig(mockBaseUrl))}`,
        `npm_config_registry=${CLOSED_LOOPBACK_REGISTRY}`,
        ...OFFLINE_SWITCHES.map((s) => `${prefix}_${s}`),
        ...(flavour.extraSwitches ?? []),
        flavour.bin,
      ];
      return throwawayCli(home, cwd, command, ["--continue"]);
    },
    isReady: (screen) => screen.includes(READY_PLACEHOLDER) || screen.includes(READY_SESSION_FOOTER),
    approvalToolCall: bashCall,
    ...(flavour.ownSteps ? { ownSteps: flavour.ownSteps } : {}),
    isToolResult: (request) => messages(request).some((m) => field(m, "role") === "tool"),
    approvalQuestion: "Permission required",
    async approve(tmux, target) {
      // "Allow once" is the selected choice: Enter confirms it.
      await answerDialog(tmux, target, PERMISSION_CHOICES, "Enter");
    },
    async interrupt(tmux, target) {
      const running = (s: string) => s.includes(INTERRUPT_HINT) || s.includes(INTERRUPT_CONFIRM);
      for (let attempt = 1; ; attempt++) {
        await tmux.run("send-keys", "-t", target, "Escape");
        const asked = await waitForScreen(
          tmux,
          target,
          // On a retry the turn may have stopped meanwhile: then there is nothing left to interrupt.
          (s) => s.includes(INTERRUPT_CONFIRM) || (attempt > 1 && !running(s)),
          `${flavour.label} to ask for a second Escape`,
          INTERRUPT_CONFIRM_TIMEOUT_MS,
        );
        if (!running(asked)) return;
        await tmux.run("send-keys", "-t", target, "Escape");
        // Taken, the turn stops and its footer goes. On a loaded machine Kilo once went on with the
        // turn (a CI run: the footer back to its hint, the model request never dropped), as if the
        // second Escape came after its window for one closed; a person then presses twice again.
        try {
          await waitForScreen(
            tmux,
            target,
            (s) => !running(s),
            `${flavour.label} to stop the turn`,
            TURN_STOP_TIMEOUT_MS,
          );
          return;
        } catch (err) {
          if (attempt >= INTERRUPT_ATTEMPTS) throw err;
        }
      }
    },
    cancelApproval: flavour.cancelApproval,
  };
}

/** The real opencode TUI. */
export const opencodeDriver: CliDriver = opencodeCoreDriver({
  name: "opencode",
  label: "opencode 1.18.33",
  bin: OPENCODE_BIN,
  version: "1.18.33",
  cli: Cli.OPENCODE,
  envPrefix: "OPENCODE",
  ownSteps: OPENCODE_STEPS,
  async cancelApproval(tmux, target) {
    await answerDialog(tmux, target, PERMISSION_CHOICES, "Escape");
  },
});

function opencodeConfig(mockBaseUrl: string): unknown {
  return {
    model: `mock/${OPENCODE_MODEL}`,
    small_model: `mock/${OPENCODE_MODEL}`,
    autoupdate: false,
    share: "disabled",
    enabled_providers: ["mock"],
    provider: {
      mock: {
        npm: "@ai-sdk/openai-compatible",
        name: "Compat mock",
        options: { baseURL: mockBaseUrl, apiKey: "compat" },
        models: { [OPENCODE_MODEL]: { name: "Mock model", tool_call: true } },
      },
    },
    permission: { bash: "ask", edit: "ask", webfetch: "ask" },
  };
}

function isTitleRequest(request: RecordedRequest): boolean {
  const content = field(messages(request)[0], "content");
  return typeof content === "string" && content.startsWith(TITLE_REQUEST_MARK);
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
