import {
  type Cli,
  type PendingPrompt,
  PromptKind,
  type SessionStatus,
  type StatusReason,
} from "../../../gen/staragent/v1/session_pb.js";
import type { AgentSignals } from "../agents/agent.js";
import type { ProcessInfo } from "../agents/process-table.js";
import { limitDetail, type UsageReading } from "../agents/usage/usage.js";
import type { PaneInfo } from "../tmux/panes.js";

/** What the status engine concluded about one session's active pane. */
export interface SessionObservation {
  readonly cli: Cli;
  readonly status: SessionStatus;
  readonly reason: StatusReason;
  /** The visible question when reason is INPUT_PROMPT. */
  readonly prompt: string;
  readonly promptKind: PromptKind;
  /** The prompt in full when reason is INPUT_PROMPT and the CLI's prompt reader could read it. */
  readonly pendingPrompt?: PendingPrompt;
  /** Identity of the newest completed turn ("" when none). */
  readonly completionId: string;
  /** The last line of that turn's reply ("" when unknown). */
  readonly replyExcerpt?: string;
  /** How the status was derived, for people troubleshooting. */
  readonly detail: string;
  /** argv of the CLI (or the foreground program), joined for display. */
  readonly command: string;
  /** Newest activity seen in the native state, when known. */
  readonly lastActivity?: Date;
  /** Changes whenever the chat derived from the pane may have changed. */
  readonly chatRevision: string;
  /** Identity of the newest user prompt in the native log, when the CLI has one (see AgentSignals). */
  readonly lastUserTurn?: string;
  /** True when that prompt was steered into a turn already running (see AgentSignals). */
  readonly lastUserTurnJoined?: boolean;
  /** Identity of the newest message the CLI queued behind its running turn (see AgentSignals). */
  readonly lastQueuedMessage?: string;
  /** When the newest user prompt and the newest queued message were logged (see AgentSignals). */
  readonly lastUserTurnAt?: number;
  readonly lastQueuedAt?: number;
  /**
   * True when the session's CLI keeps a native log (claude, codex, opencode: even before the first
   * prompt creates it), so chat delivery can be confirmed by the new user turn appearing there.
   */
  readonly hasNativeLog?: boolean;
  /** The native log the CLI process is bound to, for chat history ("" when none; see AgentSignals). */
  readonly chatLogPath?: string;
  /** The session inside that log's database (opencode), "" otherwise. */
  readonly chatLogSession?: string;
  /** How the log was bound, or why none was. */
  readonly chatLogDetail?: string;
  /** Tokens, context, model and plan limits of the conversation, when the CLI records them. */
  readonly usage?: UsageReading;
}

/** Turns the panes of a machine into observations; implemented by the status engine. */
export interface SessionInspector {
  /**
   * Observes each session's active pane. `seen` maps a tmux session name to the completion id last
   * marked seen for it. Never throws for one session's trouble: a session whose signals cannot be read
   * gets a sane observation with the reason in `detail`.
   */
  inspect(
    panes: ReadonlyMap<string, PaneInfo>,
    seen: ReadonlyMap<string, string>,
  ): Promise<Map<string, SessionObservation>>;
  /**
   * Optional: calls `wake` whenever native state the sessions depend on changes (files written), so a
   * watch loop can look at once instead of at its next poll. While subscribed, the inspector may reuse
   * an observation whose pane and files did not change. Returns the unsubscribe function.
   */
  watchChanges?(wake: () => void): () => void;
  /**
   * Optional: true when the last inspection found a session whose status can change with nothing but
   * time or the screen (a turn running, a prompt shown, a screen-only CLI): no file event would report
   * it, so a watch loop should keep polling at its fast rate.
   */
  readonly needsFastPoll?: boolean;
}

/** The observation of an agent CLI from its module's signals and the status they decide. */
export function agentObservation(
  cli: Cli,
  process: ProcessInfo,
  signals: AgentSignals,
  { status, reason }: { status: SessionStatus; reason: StatusReason },
  paneRevision: string,
): SessionObservation {
  return {
    cli,
    status,
    reason,
    prompt: signals.prompt?.text ?? "",
    promptKind: signals.prompt?.kind ?? PromptKind.UNSPECIFIED,
    ...(signals.prompt?.pending ? { pendingPrompt: signals.prompt.pending } : {}),
    completionId: signals.completionId,
    replyExcerpt: signals.completionId === "" ? "" : (signals.replyExcerpt ?? ""),
    // A session stopped by its plan's limit is not simply idle: the detail says so first.
    detail: signals.usage?.limitReached
      ? `${limitDetail(signals.usage.limitReached)}; ${signals.detail}`
      : signals.detail,
    command: process.argv.join(" "),
    lastActivity: signals.lastActivity,
    // tmux's session_activity has 1 s resolution: the scrollback size, the cursor and the native
    // log's mtime change with finer grain, and none of them moves while a session is idle.
    chatRevision: `${paneRevision}.${signals.lastActivity?.getTime() ?? 0}`,
    lastUserTurn: signals.lastUserTurn ?? "",
    lastUserTurnJoined: signals.lastUserTurnJoined ?? false,
    lastQueuedMessage: signals.lastQueuedMessage ?? "",
    lastUserTurnAt: signals.lastUserTurnAt ?? 0,
    lastQueuedAt: signals.lastQueuedAt ?? 0,
    hasNativeLog: signals.hasNativeLog ?? false,
    chatLogPath: signals.chatLog?.path ?? "",
    chatLogSession: signals.chatLog?.session ?? "",
    chatLogDetail: signals.chatLogDetail ?? "",
    usage: signals.usage,
  };
}

/** The observation of a program read from the pane alone (a shell, another program, an exited pane). */
export function plainObservation(
  cli: Cli,
  status: SessionStatus,
  reason: StatusReason,
  detail: string,
  command: string,
  chatRevision: string,
): SessionObservation {
  const promptKind = PromptKind.UNSPECIFIED;
  return {
    cli,
    status,
    reason,
    prompt: "",
    promptKind,
    completionId: "",
    detail,
    command,
    chatRevision,
    hasNativeLog: false,
  };
}
