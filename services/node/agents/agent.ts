import type { Cli, PromptKind } from "../../../gen/staragent/v1/session_pb.js";
import type { PaneInfo } from "../tmux/panes.js";
import type { ProcessInfo } from "./process-table.js";

/** What one agent module is given to observe a pane running its CLI. */
export interface AgentContext {
  readonly pane: PaneInfo;
  /** The CLI's process (the one `recognises` accepted). */
  readonly process: ProcessInfo;
  /** When the CLI process started; native logs older than this say nothing about the current run. */
  readonly processStart: Date;
  /** The CLI process's environment (`/proc/<pid>/environ`), falling back to the node's own. */
  readonly env: () => Promise<Readonly<Record<string, string | undefined>>>;
  /** The bottom of the pane (about 30 lines), ANSI stripped; read at most once per observation. */
  readonly screen: () => Promise<string>;
}

/** A visible question on screen. */
export interface PromptSignal {
  readonly kind: PromptKind;
  readonly text: string;
}

/** The signals an agent module reads for one pane, before precedence is applied. */
export interface AgentSignals {
  /** The newest turn's state in the native state (or the screen, where no native state exists). */
  readonly turn: "active" | "completed" | "interrupted" | "none";
  /** Identity of the newest completed turn ("" when none). */
  readonly completionId: string;
  /** A visible input or approval prompt. */
  readonly prompt?: PromptSignal;
  /** How the signals were read, for people troubleshooting. */
  readonly detail: string;
  /** Newest write to the native state, when known. */
  readonly lastActivity?: Date;
  /**
   * Identity of the newest user prompt in the native log ("" when none or no native log): chat
   * delivery is confirmed when it changes after a message is sent.
   */
  readonly lastUserTurn?: string;
}

/** One supported CLI: how to recognise it and how to read its state. Adding a CLI adds one module. */
export interface AgentModule {
  readonly cli: Cli;
  /** Short name used in filters and logs (`claude`, `codex`, `opencode`). */
  readonly name: string;
  /** True when `process` (from the tree below a pane) is this CLI. */
  recognises(process: ProcessInfo): boolean;
  /** Reads the CLI's signals; never throws for unreadable or malformed state. */
  observe(context: AgentContext): Promise<AgentSignals>;
}
