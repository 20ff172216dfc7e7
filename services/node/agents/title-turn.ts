import { PromptKind } from "../../../gen/staragent/v1/session_pb.js";
import { BoundedMap } from "../../common/bounded-map.js";
import { type AgentContext, type AgentSignals, type PromptSignal, processKey, wholeScreen } from "./agent.js";
import { type ScreenPrompt, toPendingPrompt } from "./prompt.js";

/**
 * How long after the log's newest write a ready title may end a turn the log leaves open: the title is
 * drawn a frame after the prompt is written, and a turn cancelled before its reply (or failed) may
 * write nothing at all, or write it seconds late.
 */
export const TITLE_AFTER_LOG_MS = 1_500;
/** Processes whose cancelled turn is remembered at once. */
const MAX_REMEMBERED_CANCELS = 1024;

/** What the pane title of such a CLI says of the turn ("none": a title it did not set). */
export type TitleSignal = "ready" | "working" | "approval" | "none";

/** One CLI's screen rules, for `TitleTurn`. */
export interface TitleTurnRules {
  /** The module's name (prompt fingerprints). */
  readonly name: string;
  readonly readPrompt: (screen: string) => ScreenPrompt | undefined;
  readonly screenPrompt: (screen: string) => PromptSignal | undefined;
  /** The working line, which stands for the title when the title is not the CLI's. */
  readonly screenWorking: (screen: string) => boolean;
  /** True when the screen says the newest turn (typed as `prompt`) was cancelled. */
  readonly screenCancelled: (screen: string, prompt: string) => boolean;
}

/** What the log said of the newest turn (undefined: no log of this run). */
export interface LogTurn {
  readonly turn: AgentSignals["turn"];
  /** The newest typed prompt's identity, for remembering a cancel. */
  readonly lastUserTurn: string;
  /** The newest typed prompt's text. */
  readonly prompt: string;
  /** True when a tool call may be waiting for its dialog's answer. */
  readonly toolPending: boolean;
  readonly mtimeMs: number;
  /** True when this read looked at the log's contents (the screen is then read afresh). */
  readonly reread: boolean;
}

/**
 * The log's turn as `settle` takes it: from a log written since the process started and its state for
 * this run; undefined without either (the title and the screen then decide alone).
 */
export function logTurn(
  fresh: { readonly mtimeMs: number; readonly reread: boolean } | undefined,
  state: { readonly turn: AgentSignals["turn"]; readonly lastUserTurn: string; readonly prompt: string } | undefined,
  toolPending: boolean,
): LogTurn | undefined {
  if (!fresh || !state) return undefined;
  const { turn, lastUserTurn, prompt } = state;
  return { turn, lastUserTurn, prompt, toolPending, mtimeMs: fresh.mtimeMs, reread: fresh.reread };
}

/**
 * The turn of a CLI whose log has no end-of-turn record (Gemini CLI, Qwen Code; docs/status.md): the
 * log's reading, corrected by the title the CLI keeps up to date itself (working: the turn goes on;
 * a dialog: the prompt on screen) and, when the log leaves a turn open under a ready title for
 * TITLE_AFTER_LOG_MS, by the screen (cancelled: interrupted, remembered for that turn; else it ended
 * without a reply). With a title that is not the CLI's, the screen's working line stands for it.
 */
export class TitleTurn {
  /** Per process, the prompt whose turn the screen once showed cancelled (the sign goes away later). */
  private readonly cancelled = new BoundedMap<string, string>(MAX_REMEMBERED_CANCELS);

  constructor(private readonly rules: TitleTurnRules) {}

  async settle(
    context: AgentContext,
    title: TitleSignal,
    log: LogTurn | undefined,
  ): Promise<{ turn: AgentSignals["turn"]; prompt: AgentSignals["prompt"]; details: string[] }> {
    const details: string[] = [];
    let turn: AgentSignals["turn"] = log?.turn ?? "none";
    let prompt: AgentSignals["prompt"];
    if (title === "working") turn = "active";
    const quietMs = log ? Date.now() - log.mtimeMs : Number.POSITIVE_INFINITY;
    if (title === "ready" && turn === "active" && log && quietMs > TITLE_AFTER_LOG_MS) {
      const key = processKey(context.process);
      const cancelled =
        this.cancelled.get(key) === log.lastUserTurn || this.rules.screenCancelled(await context.screen(0), log.prompt);
      if (cancelled) this.cancelled.set(key, log.lastUserTurn);
      turn = cancelled ? "interrupted" : "none";
      details.push(
        cancelled ? "the title says ready and the screen cancelled" : "the title says ready: the turn ended unlogged",
      );
    }
    if (title === "approval" || title === "none" || log?.toolPending || (!log && title !== "working")) {
      const screen = await context.screen(log?.reread ? 0 : undefined);
      prompt = this.rules.screenPrompt(screen);
      if (!prompt && title === "approval") prompt = { kind: PromptKind.APPROVAL, text: "Action required" };
      const read = prompt ? this.rules.readPrompt(await wholeScreen(context)) : undefined;
      if (prompt && read) prompt = { ...prompt, pending: toPendingPrompt(this.rules.name, read) };
      const working = title === "none" && this.rules.screenWorking(screen);
      if (working || prompt) turn = "active";
      details.push(prompt ? "prompt on screen" : working ? "working on screen" : "screen quiet");
    }
    return { turn, prompt, details };
  }
}
