import type { JsonRecord, LifecycleReducer } from "../log-follower.js";
import { arrayField, objectField, objects, stringField } from "../record-fields.js";

/** Texts Claude Code writes as a `user` line when the user interrupts (docs/status.md, "Per CLI"). */
const INTERRUPT_PREFIX = "[Request interrupted by user";
/** Local slash-command and `!` bash-mode output: the command ran without a model turn. */
const LOCAL_OUTPUT = /^<(local-command-std(out|err)|bash-std(out|err))>/;
/** A slash command as the transcript records it: `<command-name>/clear</command-name>…`. */
const COMMAND_NAME = /^<command-name>([^<]*)<\/command-name>/;

/** A tool call waiting for its result. */
export interface PendingTool {
  readonly id: string;
  readonly name: string;
  readonly input: JsonRecord | undefined;
}

/** The newest turn of a Claude Code transcript. */
export interface ClaudeTurnState {
  readonly turn: "active" | "completed" | "interrupted" | "none";
  /** uuid of the prompt that opened the newest turn: the turn's identity ("" when none seen). */
  readonly promptUuid: string;
  /** The text of that prompt as the pane shows it (a slash command by its name), "" when unknown. */
  readonly promptText: string;
  /** When that prompt was written (ms since the epoch; 0 when unknown). */
  readonly promptAt: number;
  /** True once the model answered that prompt (assistant output or a tool result). */
  readonly answered: boolean;
  /** Tool calls without a result yet (an approval or a question may be on screen). */
  readonly pending: readonly PendingTool[];
  /**
   * The newest record is assistant text with `stop_reason: null` (1.0.x/2.0.x leave it so even at a
   * turn's end): only the screen can tell whether the turn is still running.
   */
  readonly ambiguousEnd: boolean;
  /** True when the turn ended with an API error. */
  readonly apiError: boolean;
  /** The record that decided `turn`, for the status detail. */
  readonly decidedBy: string;
  /** The newest assistant text of the turn ("" before any). */
  readonly replyText: string;
  /**
   * Identity of the newest message queued behind the turn (a `queue-operation` enqueue: its time and
   * text), "" when none. 2.1.332 queues a message typed while it works and opens its turn only when
   * the running one ends (seen in `make compat`).
   */
  readonly queued: string;
  /** When that message was queued (ms since the epoch; 0 when none or unknown). */
  readonly queuedAt: number;
}

const INITIAL: ClaudeTurnState = {
  turn: "none",
  promptUuid: "",
  promptText: "",
  promptAt: 0,
  answered: false,
  pending: [],
  ambiguousEnd: false,
  apiError: false,
  decidedBy: "no records",
  replyText: "",
  queued: "",
  queuedAt: 0,
};

/** The text of a user line: a string content, or its text blocks joined ("" for tool results only). */
function userText(record: JsonRecord): string {
  const message = objectField(record, "message");
  const content = message?.content;
  if (typeof content === "string") return content;
  return objects(arrayField(message, "content"))
    .filter((b) => b.type === "text")
    .map((b) => stringField(b, "text"))
    .join("\n");
}

/** Lines that are never the session's own conversation: subagents (sidechains) and meta expansions. */
function skipped(record: JsonRecord): boolean {
  return record.isSidechain === true || record.isMeta === true;
}

/** True for a prompt a person typed (or a slash command), which opens a turn. */
export function isRealPrompt(record: JsonRecord): boolean {
  if (record.type !== "user" || skipped(record) || record.isCompactSummary === true) return false;
  const blocks = objects(arrayField(objectField(record, "message"), "content"));
  if (blocks.some((b) => b.type === "tool_result")) return false;
  const text = userText(record);
  return text !== "" && !text.startsWith(INTERRUPT_PREFIX) && !LOCAL_OUTPUT.test(text);
}

/**
 * Claude Code's transcript lifecycle (docs/status.md, "Per CLI"): a real prompt opens a turn; tool calls and results
 * keep it active; `end_turn`, `turn_duration`, `stop_hook_summary` or an API error complete it; an
 * interrupt line ends it as interrupted. Metadata types, sidechains and meta lines are skipped.
 */
export const claudeTranscriptReducer: LifecycleReducer<ClaudeTurnState> = {
  initial: () => INITIAL,
  opensTurn: isRealPrompt,
  apply(state, record) {
    if (skipped(record)) return state;
    // A turn whose prompt lies beyond the backward walk's reach still needs a stable identity.
    if (state.promptUuid === "" && !isRealPrompt(record) && stringField(record, "uuid") !== "") {
      state = { ...state, promptUuid: stringField(record, "uuid") };
    }
    switch (record.type) {
      case "user":
        return applyUser(state, record);
      case "assistant":
        return applyAssistant(state, record);
      case "queue-operation":
        // Queued input changes no turn: only delivery is confirmed by it.
        return stringField(record, "operation") === "enqueue" ? applyEnqueue(state, record) : state;
      case "system": {
        const subtype = stringField(record, "subtype");
        if (subtype === "turn_duration" || subtype === "stop_hook_summary") {
          if (state.turn === "interrupted" || state.promptUuid === "") return state;
          return { ...state, turn: "completed", pending: [], ambiguousEnd: false, decidedBy: `system/${subtype}` };
        }
        // A local command (`/clear`, `/help`, …) ran without asking the model.
        if (subtype === "local_command") {
          return { ...state, turn: "none", pending: [], ambiguousEnd: false, decidedBy: "system/local_command" };
        }
        return state;
      }
      default:
        return state;
    }
  },
};

function applyUser(state: ClaudeTurnState, record: JsonRecord): ClaudeTurnState {
  if (record.isCompactSummary === true) return state;
  if (isRealPrompt(record)) {
    const text = userText(record);
    const at = Date.parse(stringField(record, "timestamp"));
    return {
      turn: "active",
      promptUuid: stringField(record, "uuid"),
      promptText: COMMAND_NAME.exec(text)?.[1] ?? text,
      promptAt: Number.isFinite(at) ? at : 0,
      answered: false,
      pending: [],
      ambiguousEnd: false,
      apiError: false,
      decidedBy: "user prompt",
      replyText: "",
      queued: "",
      queuedAt: 0,
    };
  }
  const text = userText(record);
  if (text.startsWith(INTERRUPT_PREFIX)) {
    return { ...state, turn: "interrupted", pending: [], ambiguousEnd: false, decidedBy: "interrupt" };
  }
  if (LOCAL_OUTPUT.test(text)) {
    return { ...state, turn: "none", pending: [], ambiguousEnd: false, decidedBy: "local command output" };
  }
  const results = objects(arrayField(objectField(record, "message"), "content")).filter(
    (b) => b.type === "tool_result",
  );
  if (results.length === 0) return state;
  const done = new Set(results.map((b) => stringField(b, "tool_use_id")));
  return {
    ...state,
    turn: "active",
    answered: true,
    pending: state.pending.filter((p) => !done.has(p.id)),
    ambiguousEnd: false,
    decidedBy: "tool result",
  };
}

function applyEnqueue(state: ClaudeTurnState, record: JsonRecord): ClaudeTurnState {
  const timestamp = stringField(record, "timestamp");
  const at = Date.parse(timestamp);
  return { ...state, queued: `${timestamp} ${stringField(record, "content")}`, queuedAt: Number.isFinite(at) ? at : 0 };
}

function applyAssistant(state: ClaudeTurnState, record: JsonRecord): ClaudeTurnState {
  const message = objectField(record, "message");
  if (record.isApiErrorMessage === true) {
    return {
      ...state,
      turn: "completed",
      answered: true,
      pending: [],
      ambiguousEnd: false,
      apiError: true,
      decidedBy: "API error",
    };
  }
  const blocks = objects(arrayField(message, "content"));
  const said = blocks
    .filter((b) => b.type === "text")
    .map((b) => stringField(b, "text"))
    .join("\n");
  if (said.trim() !== "") state = { ...state, replyText: said };
  const calls = blocks
    .filter((b) => b.type === "tool_use")
    .map((b) => ({ id: stringField(b, "id"), name: stringField(b, "name"), input: objectField(b, "input") }));
  const pending = calls.length > 0 ? [...state.pending, ...calls] : state.pending;
  const stop = message?.stop_reason;
  if (stop === "end_turn" && calls.length === 0) {
    return { ...state, turn: "completed", answered: true, pending: [], ambiguousEnd: false, decidedBy: "end_turn" };
  }
  const textOnly = calls.length === 0 && blocks.some((b) => b.type === "text");
  return {
    ...state,
    turn: "active",
    answered: true,
    pending,
    ambiguousEnd: (stop === null || stop === undefined) && textOnly && pending.length === 0,
    decidedBy: calls.length > 0 ? `tool_use ${calls.map((c) => c.name).join(", ")}` : "assistant output",
  };
}
