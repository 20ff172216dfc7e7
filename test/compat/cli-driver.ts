import type { Cli } from "../../gen/staragent/v1/session_pb.js";
import type { TestTmux } from "../support/tmux.js";
import type { RecordedRequest } from "./mock-model-server.js";
import type { ScriptedReply, ScriptedToolCall } from "./model-reply.js";

/** A CLI made ready to start: its throwaway HOME, working folder and the command that starts it. */
export interface PreparedCli {
  readonly home: string;
  readonly cwd: string;
  /** The argv for `CreateSession` (an `env` line that sets HOME and the CLI's offline settings). */
  readonly command: readonly string[];
  /** Pids outside the pane that belong to this CLI (Codex's app-server daemon); read when called. */
  backgroundPids(): number[];
  /** Stops what the CLI left running outside tmux, then removes HOME and the working folder. */
  cleanup(): Promise<void>;
}

/** What the shared compat scenario needs to know about one real CLI. */
export interface CliDriver {
  /** Human name for test titles. */
  readonly label: string;
  /** The tmux session (and StarAgent session id) the CLI runs in. */
  readonly sessionId: string;
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
}
