import type { JsonRecord, LifecycleReducer } from "../log-follower.js";
import { arrayField, objectField, objects, stringField } from "../record-fields.js";

/** The newest turn of a Factory droid session log (docs/status.md, "Factory droid"). */
export interface DroidTurnState {
  readonly turn: "active" | "completed" | "interrupted" | "none";
  /** The `turnId` of the `agent_turn_outcome` that completed the newest turn ("" when none). */
  readonly completionId: string;
  /** The `id` of the newest typed prompt ("" when none). */
  readonly lastUserTurn: string;
  /** The newest typed prompt, for finding it on a pane's screen. */
  readonly prompt: string;
  /** When the newest typed prompt was written (ms since the epoch; 0 when unknown). */
  readonly turnStartedAt: number;
  /** True after a `tool_use` without its `tool_result` yet (the approval dialog may be on screen). */
  readonly callPending: boolean;
  /** True when the newest tool result says the person refused the call. */
  readonly refused: boolean;
  readonly decidedBy: string;
}

const INITIAL: DroidTurnState = {
  turn: "none",
  completionId: "",
  lastUserTurn: "",
  prompt: "",
  turnStartedAt: 0,
  callPending: false,
  refused: false,
  decidedBy: "no records",
};

/** The result droid writes for a call refused on its approval dialog. */
const REFUSED_RESULT = /^Tool execution cancelled by user/;

/** The content blocks of a `message` record. */
export function droidBlocks(record: JsonRecord): JsonRecord[] {
  return objects(arrayField(objectField(record, "message"), "content"));
}

/**
 * The text of a typed prompt ("" for any other record): a user `message` with text blocks that is
 * not one droid writes for the model alone (`visibility: "llm_only"`: its context reminders and the
 * `Request cancelled by user` notes of an interrupt).
 */
export function droidPromptText(record: JsonRecord): string {
  if (record.type !== "message") return "";
  const message = objectField(record, "message");
  if (stringField(message, "role") !== "user" || stringField(message, "visibility") === "llm_only") return "";
  return droidBlocks(record)
    .filter((b) => b.type === "text")
    .map((b) => stringField(b, "text"))
    .join("\n");
}

/**
 * Factory droid's session log (docs/status.md, "Factory droid"): a typed prompt opens a turn, an
 * `agent_turn_outcome` ends it (`reason: "completed"`, its `turnId` the completion's identity, or
 * `"cancelled"` after Escape). A refused approval is logged as a failed `tool_result` and then a
 * `completed` outcome with no reply after it: that is an interrupt, as the screen's `⎿ Interrupted`
 * says. A `tool_use` without its result keeps the turn open (the dialog is on screen only).
 */
export const droidSessionReducer: LifecycleReducer<DroidTurnState> = {
  initial: () => INITIAL,
  opensTurn: (record) => droidPromptText(record) !== "",
  apply(state, record) {
    if (record.type === "agent_turn_outcome") {
      if (state.turn !== "active") return state;
      const reason = stringField(record, "reason");
      if (reason === "completed" && !state.refused) {
        return {
          ...state,
          turn: "completed",
          completionId: stringField(record, "turnId") || state.lastUserTurn,
          callPending: false,
          decidedBy: "agent_turn_outcome completed",
        };
      }
      return {
        ...state,
        turn: "interrupted",
        callPending: false,
        decidedBy: state.refused ? "agent_turn_outcome after a refused tool" : `agent_turn_outcome ${reason}`,
      };
    }
    if (record.type !== "message") return state;
    const text = droidPromptText(record);
    if (text !== "") {
      const at = Date.parse(stringField(record, "timestamp"));
      return {
        ...state,
        turn: "active",
        lastUserTurn: stringField(record, "id"),
        prompt: text,
        turnStartedAt: Number.isFinite(at) ? at : 0,
        callPending: false,
        refused: false,
        decidedBy: "typed prompt",
      };
    }
    const blocks = droidBlocks(record);
    const result = blocks.find((b) => b.type === "tool_result");
    if (result) {
      const refused = result.is_error === true && REFUSED_RESULT.test(stringField(result, "content"));
      return { ...state, callPending: false, refused, decidedBy: refused ? "tool refused" : "tool result" };
    }
    if (blocks.some((b) => b.type === "tool_use")) {
      return { ...state, turn: "active", callPending: true, refused: false, decidedBy: "tool call" };
    }
    if (blocks.some((b) => b.type === "text") && stringField(objectField(record, "message"), "role") === "assistant") {
      return { ...state, refused: false, decidedBy: "reply" };
    }
    return state;
  },
};
