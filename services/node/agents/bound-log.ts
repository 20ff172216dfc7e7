import type { AgentContext, AgentSignals } from "./agent.js";
import { openedBeforeStart, processKey, writtenSince } from "./agent.js";
import type { Binding, LogBinder } from "./log-binding.js";
import { type ProcessInfo, readProcess } from "./process-table.js";

/** A log the CLI itself names for its process, and how (for `status_detail`). */
export interface NamedLog {
  readonly key: string;
  readonly how: string;
}

/** One of a folder's logs that the pane's process may be writing: its key (a path, a session id) and newest write. */
export interface LogEntry {
  readonly key: string;
  readonly updatedMs: number;
}

/**
 * Binds the pane's CLI process to one of its folder's logs through the module's LogBinder: the logs
 * as candidates, their newest prompts read only when instances of the CLI share the folder (only then
 * does the binder compare them with the screen), the pane's screen read only when the binder asks.
 * One helper for every module that keeps logs per folder, so they all bind alike.
 */
export async function bindProcessLog<L extends LogEntry>(
  binder: LogBinder,
  context: Pick<AgentContext, "process" | "siblings" | "visibleScreen">,
  logs: readonly L[],
  newestPrompt: (log: L) => Promise<string | undefined> | string | undefined,
  explicit?: NamedLog,
): Promise<Binding> {
  const siblings = context.siblings.map(processKey);
  const candidates = await Promise.all(
    logs.map(async (log) => ({
      key: log.key,
      updatedMs: log.updatedMs,
      newestPrompt: siblings.length > 0 ? ((await newestPrompt(log)) ?? "") : "",
    })),
  );
  return binder.bind({
    process: processKey(context.process),
    siblings,
    candidates,
    explicit,
    screen: () => context.visibleScreen(0),
  });
}

/**
 * True when process `pid` is the pane's CLI process or a child it started (a CLI whose log or lock
 * names the pid of what writes it, which may be the binary its loader started).
 */
export async function isProcessOrChild(pid: number, process: ProcessInfo): Promise<boolean> {
  if (pid === process.pid) return true;
  return (await readProcess(pid))?.ppid === process.pid;
}

/** What a module's log follower answers for a log: when it was written and the reduced state. */
export interface ReadLog {
  readonly path: string;
  readonly mtimeMs: number;
  readonly state: { readonly turnStartedAt: number; readonly decidedBy: string };
}

/** A bound log as it bears on this process's status. */
export interface FreshLog<L extends ReadLog> {
  /** The log, when written since the process started (an older one describes an earlier run). */
  readonly fresh: L | undefined;
  /** True when its newest turn opened before this process started (an earlier run's, `--resume`). */
  readonly earlier: boolean;
  /** Its state, when it describes this process's newest turn. */
  readonly state: L["state"] | undefined;
  /** What was read and how it was bound, the first part of `status_detail`. */
  readonly detail: string;
}

/** How a module names its logs in `status_detail` ("session", "rollout"). */
export interface LogWords {
  /** Before a log's name: "session 1234.jsonl (…)". */
  readonly log: string;
  /** When there is none: "no session file (…)". */
  readonly none: string;
  /** The log's short name (its file name; its folder's for logs named alike). */
  readonly name: (path: string) => string;
}

/**
 * The bound log, if it can tell this process's status: written since the process started, and its
 * newest turn not an earlier run's. Every module that reads one log per process judges it so.
 */
export function freshLog<L extends ReadLog>(
  log: L | undefined,
  processStart: Date,
  how: string,
  words: LogWords,
): FreshLog<L> {
  const fresh = log && writtenSince(log.mtimeMs, processStart) ? log : undefined;
  const earlier = fresh !== undefined && openedBeforeStart(fresh.state.turnStartedAt, processStart);
  const detail = fresh
    ? `${words.log} ${words.name(fresh.path)} (${how}): ${earlier ? "its newest turn predates this process" : fresh.state.decidedBy}`
    : `${words.none} (${how})`;
  return { fresh, earlier, state: earlier ? undefined : fresh?.state, detail };
}

/** What `logSignals` is given: the status settled from the log and the screen, and where the log is. */
export interface LogSignalsInput {
  readonly fresh: { readonly mtimeMs: number } | undefined;
  readonly state: { readonly lastUserTurn: string; readonly completionId: string } | undefined;
  readonly turn: AgentSignals["turn"];
  readonly prompt: AgentSignals["prompt"];
  readonly details: readonly string[];
  readonly usage: AgentSignals["usage"];
  /** The bound log's path (the chat view reads it), and how it was bound. */
  readonly path: string | undefined;
  readonly how: string;
  /** Where a change means the status may have changed (the log's folder, or where logs appear). */
  readonly statePath: string;
}

/** The signals of a module that reads its CLI's status from one log file per process. */
export function logSignals(o: LogSignalsInput): AgentSignals {
  return {
    usage: o.usage,
    turn: o.turn,
    completionId: o.turn === "completed" ? (o.state?.completionId ?? "") : "",
    prompt: o.prompt,
    detail: o.details.join("; "),
    lastActivity: o.fresh ? new Date(o.fresh.mtimeMs) : undefined,
    lastUserTurn: o.state?.lastUserTurn ?? "",
    hasNativeLog: true,
    chatLog: o.path ? { path: o.path, session: "" } : undefined,
    chatLogDetail: o.how,
    statePaths: [o.statePath],
  };
}
