import type { JsonRecord, LifecycleReducer } from "../log-follower.js";
import { arrayField, objectField, objects, stringField } from "../record-fields.js";

/** The newest turn of a Codex rollout. */
export interface CodexTurnState {
  readonly turn: "active" | "completed" | "interrupted" | "none";
  /** `turn_id` of the newest turn ("" in legacy rollouts, which have none). */
  readonly turnId: string;
  /** Identity of the newest completed turn ("" when none). */
  readonly completionId: string;
  /**
   * Identity of the newest user prompt: its turn's id, or its timestamp in legacy rollouts. A further
   * prompt in the same turn (a follow-up Codex steered into the running turn) is `turn id:item id`, so
   * every prompt has an identity of its own.
   */
  readonly lastUserTurn: string;
  /** True when the newest user prompt joined a running turn (steered into it) rather than opening one. */
  readonly lastUserTurnJoined: boolean;
  /** The newest prompt's text as typed ("" when none seen), for finding it on a pane's screen. */
  readonly prompt: string;
  /** When the newest turn started (ms since the epoch; 0 when unknown). */
  readonly turnStartedAt: number;
  /** Tool calls without output yet (an approval may be on screen: it is never persisted). */
  readonly pendingCalls: readonly string[];
  /** True once any task event was seen: without them (about 0.60) messages decide the turn. */
  readonly taskEvents: boolean;
  /** The record that decided `turn`, for the status detail. */
  readonly decidedBy: string;
  /** The newest agent message of the turn (`agent_message`, or `task_complete`'s `last_agent_message`). */
  readonly replyText: string;
}

const INITIAL: CodexTurnState = {
  turn: "none",
  turnId: "",
  completionId: "",
  lastUserTurn: "",
  lastUserTurnJoined: false,
  prompt: "",
  turnStartedAt: 0,
  pendingCalls: [],
  taskEvents: false,
  decidedBy: "no records",
  replyText: "",
};

/** Tool call and output item types in `response_item` payloads. */
const CALL_TYPES: ReadonlySet<string> = new Set(["function_call", "custom_tool_call", "local_shell_call"]);
const OUTPUT_TYPES: ReadonlySet<string> = new Set(["function_call_output", "custom_tool_call_output"]);

/**
 * Codex's rollout lifecycle (docs/status.md, "Per CLI"): `task_started` opens a turn, `task_complete` completes it
 * (identity `turn_id`), `turn_aborted` ends it by reason. Legacy rollouts without task events: a user
 * message newer than the last agent message means working. Unknown types are skipped.
 */
export const codexRolloutReducer: LifecycleReducer<CodexTurnState> = {
  initial: () => INITIAL,
  opensTurn: (record) => record.type === "event_msg" && objectField(record, "payload")?.type === "task_started",
  apply(state, record) {
    const payload = objectField(record, "payload");
    if (!payload) return state;
    if (record.type === "response_item") return applyItem(state, payload);
    if (record.type !== "event_msg") return state;
    const turnId = stringField(payload, "turn_id");
    switch (payload.type) {
      case "task_started": {
        const startedAt = payload.started_at;
        const at = Date.parse(stringField(record, "timestamp"));
        return {
          ...state,
          turn: "active",
          turnId,
          // The record's own time has ms; `started_at` only whole seconds (too coarse next to a process start).
          turnStartedAt: Number.isFinite(at)
            ? at
            : typeof startedAt === "number" && Number.isFinite(startedAt)
              ? (startedAt + 1) * 1000
              : 0,
          pendingCalls: [],
          taskEvents: true,
          decidedBy: "task_started",
          replyText: "",
        };
      }
      case "item_completed": {
        // 0.17x records the typed prompt as an item (there is no user_message event any more).
        const item = objectField(payload, "item");
        if (stringField(item, "type") !== "UserMessage") return state;
        const text = objects(arrayField(item, "content"))
          .map((c) => stringField(c, "text"))
          .join("\n");
        return {
          ...state,
          prompt: text || state.prompt,
          ...userPrompt(state, stringField(item, "id"), state.lastUserTurn),
        };
      }
      case "task_complete":
        return {
          ...state,
          turn: "completed",
          completionId: turnId || state.turnId,
          pendingCalls: [],
          taskEvents: true,
          decidedBy: "task_complete",
          replyText: stringField(payload, "last_agent_message") || state.replyText,
        };
      case "turn_aborted": {
        const reason = stringField(payload, "reason");
        const base = { ...state, pendingCalls: [], taskEvents: true, decidedBy: `turn_aborted: ${reason}` };
        if (reason === "replaced") return { ...base, turn: "active" };
        if (reason === "budget_limited") return { ...base, turn: "completed", completionId: turnId || state.turnId };
        return { ...base, turn: "interrupted" };
      }
      case "user_message": {
        const id = state.taskEvents && state.turnId !== "" ? state.turnId : stringField(record, "timestamp");
        const prompt = stringField(payload, "message") || state.prompt;
        if (state.taskEvents) return { ...state, prompt, ...userPrompt(state, stringField(record, "timestamp"), id) };
        const at = Date.parse(stringField(record, "timestamp"));
        return {
          ...state,
          turn: "active",
          lastUserTurn: id,
          prompt,
          turnStartedAt: Number.isFinite(at) ? at : state.turnStartedAt,
          decidedBy: "user message (legacy)",
        };
      }
      case "agent_message": {
        const said = stringField(payload, "message");
        if (said.trim() !== "") state = { ...state, replyText: said };
        if (state.taskEvents || state.lastUserTurn === "") return state;
        return {
          ...state,
          turn: state.pendingCalls.length > 0 ? "active" : "completed",
          completionId: state.lastUserTurn,
          decidedBy: "agent message (legacy)",
        };
      }
      default:
        return state;
    }
  },
};

/**
 * The identity of a user prompt recorded in the current turn: the turn's id for its first prompt; for
 * a further one (Codex steered a follow-up into the running turn: same `turn_id`), the turn's id and
 * `own` (the item's id, or the record's time), so that its arrival is seen as a new prompt. Without
 * a turn id, `withoutTurn`.
 */
function userPrompt(
  state: CodexTurnState,
  own: string,
  withoutTurn: string,
): Pick<CodexTurnState, "lastUserTurn" | "lastUserTurnJoined"> {
  if (state.turnId === "") return { lastUserTurn: withoutTurn, lastUserTurnJoined: false };
  const inThisTurn = state.lastUserTurn === state.turnId || state.lastUserTurn.startsWith(`${state.turnId}:`);
  if (!inThisTurn) return { lastUserTurn: state.turnId, lastUserTurnJoined: false };
  return { lastUserTurn: `${state.turnId}:${own}`, lastUserTurnJoined: true };
}

function applyItem(state: CodexTurnState, payload: JsonRecord): CodexTurnState {
  const type = stringField(payload, "type");
  const callId = stringField(payload, "call_id");
  if (CALL_TYPES.has(type) && callId !== "") {
    return {
      ...state,
      turn: state.taskEvents ? state.turn : "active",
      pendingCalls: [...state.pendingCalls, callId],
    };
  }
  if (OUTPUT_TYPES.has(type)) return { ...state, pendingCalls: state.pendingCalls.filter((c) => c !== callId) };
  return state;
}
