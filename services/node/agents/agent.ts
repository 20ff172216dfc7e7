import type {
  Cli,
  PendingPrompt,
  PromptKind,
  SessionStatus,
  StatusReason,
} from "../../../gen/staragent/v1/session_pb.js";
import type { ChatParser } from "../chat/chat-parser.js";
import type { PaneInfo } from "../tmux/panes.js";
import type { ChatHistoryReader, ChatLogRef } from "./chat-history.js";
import type { ConversationSource } from "./conversations.js";
import type { ProcessInfo } from "./process-table.js";
import type { ScreenPrompt } from "./prompt.js";
import type { UsageReading } from "./usage/usage.js";

/**
 * How long a pane bottom read may be reused while the pane shows nothing new: prompts that appear
 * without a native-state change (or where there is none) are seen within this time, and a session
 * costs at most one tmux capture per this interval.
 */
export const SCREEN_RECHECK_MS = 1_000;

/**
 * Slack when comparing a native log's mtime with its process's start (start times come from clock
 * ticks since boot): a log written this long before the process started still counts as its own.
 */
export const PROCESS_START_SLACK_MS = 1_000;

/**
 * Slack when deciding that a turn opened before its process started (a resumed conversation's last
 * turn): the measurement error only. A start time is exact to a clock tick (10 ms) and the boot time it
 * counts from to /proc/uptime's 10 ms, and no process opens a turn before it runs (a CLI takes seconds
 * to take its first prompt), so a turn opened more than this before the start was an earlier
 * process's. Any more slack takes the last turn of a conversation resumed that soon after the turn
 * began (stop a session, resume it at once) for the new process's own, unseen completion.
 */
export const TURN_BEFORE_START_SLACK_MS = 50;

/** True when a turn opened at `openedAtMs` (0: unknown) belongs to a run before `processStart`. */
export function openedBeforeStart(openedAtMs: number, processStart: Date): boolean {
  return openedAtMs > 0 && openedAtMs < processStart.getTime() - TURN_BEFORE_START_SLACK_MS;
}

/** True when a native log written at `mtimeMs` can describe a process started at `processStart`. */
export function writtenSince(mtimeMs: number, processStart: Date): boolean {
  return mtimeMs >= processStart.getTime() - PROCESS_START_SLACK_MS;
}

/** What one agent module is given to observe a pane running its CLI. */
export interface AgentContext {
  readonly pane: PaneInfo;
  /** The CLI's process (the one `recognises` accepted). */
  readonly process: ProcessInfo;
  /** When the CLI process started; native logs older than this say nothing about the current run. */
  readonly processStart: Date;
  /** The CLI process's environment (`/proc/<pid>/environ`), falling back to the node's own. */
  readonly env: () => Promise<Readonly<Record<string, string | undefined>>>;
  /**
   * The bottom of the pane (about 30 lines), ANSI stripped. Reading it spawns tmux, so it is cached per
   * pane: a read younger than `maxAgeMs` (default SCREEN_RECHECK_MS) of an unchanged pane is reused.
   * Pass 0 when the native state just changed and a prompt may have appeared with it.
   */
  readonly screen: (maxAgeMs?: number) => Promise<string>;
  /**
   * The pane's title and its whole visible screen, ANSI stripped, from the same cached read as
   * `screen`: where prompts typed into the pane show, for telling which native log is this pane's.
   */
  readonly visibleScreen: (maxAgeMs?: number) => Promise<string>;
  /**
   * The other panes in the same folder (`pane_current_path`) whose CLI this module recognised: several
   * instances of one CLI in a folder must each be bound to their own native state.
   */
  readonly siblings: readonly ProcessInfo[];
}

/** The identity of a CLI process across polls: its pid and start time (a reused pid differs). */
export function processKey(process: ProcessInfo): string {
  return `${process.pid}:${process.startTicks}`;
}

/** A visible question on screen. */
export interface PromptSignal {
  readonly kind: PromptKind;
  readonly text: string;
  /** The prompt in full (subject, choices, fingerprint), when its module's prompt reader could read it. */
  readonly pending?: PendingPrompt;
}

/** The pane's whole visible screen (without its title line) from the context's cached read. */
export async function wholeScreen(context: AgentContext, maxAgeMs?: number): Promise<string> {
  const visible = await context.visibleScreen(maxAgeMs);
  return visible.slice(visible.indexOf("\n") + 1);
}

/** The signals an agent module reads for one pane, before precedence is applied. */
export interface AgentSignals {
  /** The newest turn's state in the native state (or the screen, where no native state exists). */
  readonly turn: "active" | "completed" | "interrupted" | "none";
  /** Identity of the newest completed turn ("" when none). */
  readonly completionId: string;
  /** The last line of the reply of the completed turn (replyExcerpt in reply-excerpt.ts), when read. */
  readonly replyExcerpt?: string;
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
  /**
   * True when that newest user prompt joined a turn that was already running: the CLI steered it into
   * the turn instead of starting a new one (Codex 0.17x does with a follow-up sent while it works).
   */
  readonly lastUserTurnJoined?: boolean;
  /**
   * When that newest user prompt was submitted, by the log's own timestamp (ms since the epoch; 0 or
   * absent when the log gives none). A CLI that writes its log late (Claude Code buffers its writes)
   * can log a turn typed before a message after the message was typed: the time tells them apart.
   */
  readonly lastUserTurnAt?: number;
  /**
   * Identity of the newest message the CLI recorded as queued behind the running turn ("" when none):
   * Claude Code 2.1.x takes a message typed while it works into a queue (a `queue-operation` enqueue
   * record) and opens its turn only when the running one ends. Chat delivery is confirmed by it then.
   */
  readonly lastQueuedMessage?: string;
  /** When that message was queued, by the log's timestamp (ms since the epoch; 0 or absent when unknown). */
  readonly lastQueuedAt?: number;
  /**
   * True when this CLI keeps a native log (even before the first prompt creates it), so chat delivery
   * can be confirmed by the new user turn appearing there.
   */
  readonly hasNativeLog?: boolean;
  /**
   * The native log this process is bound to (the binding the status comes from), so chat reads its
   * history from the session's own log and never another's; undefined when none could be bound.
   */
  readonly chatLog?: ChatLogRef;
  /** How `chatLog` was bound, or why there is none, for people ("sessions/4242.json names it"). */
  readonly chatLogDetail?: string;
  /**
   * Files (or folders, for files not created yet) whose change may change these signals: the watch
   * loop watches them to look again at once instead of at its next poll.
   */
  readonly statePaths?: readonly string[];
  /**
   * The status itself, for a program whose state is not a turn's (a shell at its prompt or running a
   * command): taken as it is instead of the precedence (docs/status.md).
   */
  readonly verdict?: { readonly status: SessionStatus; readonly reason: StatusReason };
  /**
   * Tokens, context, model and plan limits of the bound conversation, from the same native log reads
   * as the status (undefined when the CLI records none yet).
   */
  readonly usage?: UsageReading;
  /**
   * True while part of these signals is still being read in the background (a long transcript's
   * usage totals): the watch loop reads the session again at its next poll instead of reusing them.
   */
  readonly pending?: boolean;
  /**
   * True when these signals were read from the pane's reported facts alone (a screen-only CLI's window
   * activity): there is nothing to watch and nothing to reuse, and an idle look every
   * WATCH_IDLE_INTERVAL_MS sees them change, so the watch loop needs no fast poll for them.
   */
  readonly paneOnly?: boolean;
}

/**
 * Where a module's program is looked for: `tree`, any process below the pane, parents first (agent
 * CLIs, which run under a shell); `root`, the pane's own process only, and only when no `tree` module
 * recognised anything below it (shells, which an agent CLI runs under).
 */
export type AgentScope = "tree" | "root";

/** How a CLI's running turn is interrupted (AgentModule.interrupt). */
export interface InterruptKeys {
  readonly keys: readonly string[];
  /** Shown on its screen when it wants the keys again to confirm. */
  readonly confirm?: string;
}

/**
 * One supported CLI, everything StarAgent knows about it: how to recognise its process, how to read
 * its status (native state and screen rules), how to read its chat (screen parser, native log), its
 * name in `cli=` filters and whether AdoptSession offers it. The agent registry lists the modules;
 * every table of CLIs (filter names, chat parsers, the adoptable set) is derived from it, so adding a
 * CLI adds one module and one registry line.
 */
export interface AgentModule {
  readonly cli: Cli;
  /** Short name used in `cli=` filters and logs (`claude`, `codex`, `opencode`, `shell`). */
  readonly name: string;
  /** Where its process is looked for (see AgentScope). */
  readonly scope: AgentScope;
  /** True when ListAdoptableSessions offers unmanaged sessions running it. */
  readonly adoptable: boolean;
  /** Turns its pane's transcript into chat messages. */
  readonly chatParser: ChatParser;
  /** Reads its native log as chat history; undefined when it keeps none (the screen is all there is). */
  readonly history?: ChatHistoryReader;
  /** Its past conversations in its native logs, and how to resume one; undefined when it keeps none. */
  readonly conversations?: ConversationSource;
  /** True when `process` (from the tree below a pane, or the pane's root: `scope`) is this CLI. */
  recognises(process: ProcessInfo): boolean;
  /**
   * Reads the prompt on a whole visible screen (ANSI stripped), with the keys that pick each choice;
   * `expectedQuestion` is the question last observed (a question asked by a tool whose words no screen
   * rule knows). Pure: AnswerPrompt reads the screen afresh and compares the fingerprint from this.
   * Undefined for a CLI without prompts (a shell).
   */
  readPrompt?(screen: string, expectedQuestion: string): ScreenPrompt | undefined;
  /**
   * The keys that interrupt its running turn (tmux `send-keys` names), typed only on a person's
   * InterruptSession; `confirm`: a CLI that asks for them again (opencode's "esc again to interrupt")
   * gets them a second time once its screen shows that. Undefined: no interrupt.
   */
  readonly interrupt?: InterruptKeys;
  /** Reads the CLI's signals; never throws for unreadable or malformed state. */
  observe(context: AgentContext): Promise<AgentSignals>;
  /** Releases what it holds open (database connections); called once when its machine stops. */
  close?(): void;
  /**
   * How long the CLI must have had no key before an Enter submits, in ms (undefined: no wait): a CLI
   * that takes an Enter arriving right after other keys as a line break (Gemini CLI: within 30 ms)
   * would otherwise keep a sent message in its input box.
   */
  readonly submitQuietMs?: number;
}

/**
 * Runs a module's read of its CLI's state so that `observe` never throws: state that cannot be read
 * at all (a folder without permission, a database being replaced) is "no turn", with the reason in
 * `detail` for people troubleshooting, rather than an error for the whole listing.
 */
export async function observeSafely(cliLabel: string, read: () => Promise<AgentSignals>): Promise<AgentSignals> {
  try {
    return await read();
  } catch (err) {
    return {
      turn: "none",
      completionId: "",
      hasNativeLog: true,
      detail: `${cliLabel}'s state could not be read: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
}
