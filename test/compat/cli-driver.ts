import { rm } from "node:fs/promises";
import type { Cli, Session } from "../../gen/staragent/v1/session_pb.js";
import type { TestTmux } from "../support/tmux.js";
import type { HubSessions } from "./hub-session-client.js";
import type { MockModelServer, RecordedRequest } from "./mock-model-server.js";
import type { ScriptedReply, ScriptedToolCall } from "./model-reply.js";

/** A CLI made ready to start: its throwaway HOME, working folder and the commands that start it. */
export interface PreparedCli {
  readonly home: string;
  readonly cwd: string;
  /** The argv for `CreateSession` (an `env` line that sets HOME and the CLI's offline settings). */
  readonly command: readonly string[];
  /** The argv that starts the CLI again on the folder's most recent conversation (`--continue`). */
  readonly resumeCommand: readonly string[];
  /** Pids outside the pane that belong to this CLI (Codex's app-server daemon); read when called. */
  backgroundPids(): number[];
  /** Stops what the CLI left running outside tmux, then removes HOME and the working folder. */
  cleanup(): Promise<void>;
}

/**
 * A CLI prepared in a throwaway HOME and working folder that leaves nothing running outside tmux:
 * `resumeArgs` follow the command to resume the folder's most recent conversation; cleanup removes both
 * folders.
 */
export function throwawayCli(
  home: string,
  cwd: string,
  command: readonly string[],
  resumeArgs: readonly string[],
): PreparedCli {
  return {
    home,
    cwd,
    command,
    resumeCommand: [...command, ...resumeArgs],
    backgroundPids: () => [],
    cleanup: async () => {
      await rm(home, { recursive: true, force: true });
      await rm(cwd, { recursive: true, force: true });
    },
  };
}

/** One running instance of the CLI: its tmux session and StarAgent name. */
export interface CliInstance {
  readonly sessionId: string;
  /** `nodes/local/sessions/<sessionId>`. */
  readonly name: string;
  /** The tmux target of its window (`=<sessionId>:`). */
  readonly target: string;
}

/** What a CLI's own steps get to drive an instance and check what StarAgent reports. */
export interface StepContext {
  readonly tmux: TestTmux;
  readonly hub: HubSessions;
  readonly mock: MockModelServer;
  readonly instance: CliInstance;
  /** The CLI's working folder (where the commands it is asked to run write). */
  readonly cwd: string;
  /** Types a prompt into the instance and presses Enter. */
  type(text: string): Promise<void>;
  /** Waits until the instance's session matches, while every other instance keeps its last state. */
  expect(what: string, accept: (s: Session) => boolean): Promise<Session>;
  /** Marks the instance's newest completion seen and waits for idle. */
  markSeen(completionId: string): Promise<void>;
  /** Records a completion the step's turn produced, with those of the shared steps (ScenarioFacts). */
  recordCompletion(completionId: string): void;
}

/** A step only some CLIs have (Claude Code's AskUserQuestion, `/clear`). */
export interface CliStep {
  readonly title: string;
  run(step: StepContext): Promise<void>;
}

/** What the shared compat scenario needs to know about one real CLI. */
export interface CliDriver {
  /** Human name for test titles. */
  readonly label: string;
  /** The installed CLI's entry point and the pinned version its `--version` prints. */
  readonly bin: string;
  readonly version: string;
  /** Prefix of the tmux sessions (and StarAgent session ids) the CLI runs in. */
  readonly sessionPrefix: string;
  /** The `cli` StarAgent must report. */
  readonly cli: Cli;
  /** The model id the CLI is configured with, which the mock reports back. */
  readonly model: string;
  /** Answers the CLI's own side requests (session titles) so the scripted queue sees only turns. */
  sideReply(request: RecordedRequest): ScriptedReply | undefined;
  /** Writes the CLI's configuration into a throwaway HOME pointing at the mock. */
  prepare(mockBaseUrl: string): Promise<PreparedCli>;
  /** True once the screen shows the CLI is ready for typing (an earlier frame may drop input). */
  isReady(screen: string): boolean;
  /** The tool call that makes the CLI ask for approval before running `command`. */
  approvalToolCall(command: string): ScriptedToolCall;
  /** True for the model request that carries the approved tool's result. */
  isToolResult(request: RecordedRequest): boolean;
  /** A line of the approval question that StarAgent's `prompt` must contain. */
  readonly approvalQuestion: string;
  /** Answers the approval prompt with "yes, once". */
  approve(tmux: TestTmux, target: string): Promise<void>;
  /** Interrupts the running turn the way a user does (Escape, as often as the CLI wants it). */
  interrupt(tmux: TestTmux, target: string): Promise<void>;
  /**
   * True once the screen shows the model's reply has started streaming (default: its first word is
   * drawn; Claude Code draws only the reply's bullet until the reply ends or is interrupted).
   */
  replyStarted?(screen: string): boolean;
  /** Dismisses the approval dialog the way a user does (Escape on the dialog). */
  cancelApproval(tmux: TestTmux, target: string): Promise<void>;
  /**
   * After an interrupt before the model's first reply, whatever the CLI left in its input box is
   * cleared (Claude Code puts the prompt back there), so the next prompt is typed into an empty box.
   */
  clearInput?(tmux: TestTmux, target: string): Promise<void>;
  /** The quiet before an Enter submits (the CLI's module's `submitQuietMs`), when the CLI needs one. */
  readonly submitQuietMs?: number;
  /** Steps of this CLI alone, run by each instance after the shared ones. */
  readonly ownSteps?: readonly CliStep[];
  /**
   * Why the resume steps (resumed, resumed by id, queued, which runs on the resumed session) are not
   * run for this CLI yet, where they are not (docs/compat.md says what was seen); they are run otherwise.
   */
  readonly resumeNotVerified?: string;
}
