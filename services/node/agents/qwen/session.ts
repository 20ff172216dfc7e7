import type { JsonRecord, LifecycleReducer } from "../log-follower.js";
import { arrayField, objectField, objects, stringField } from "../record-fields.js";

/** The newest turn of a Qwen Code session log (docs/status.md, "Qwen Code"). */
export interface QwenTurnState {
  readonly turn: "active" | "completed" | "interrupted" | "none";
  /** The `uuid` of the reply that ended the newest turn ("" when none). */
  readonly completionId: string;
  /** The `uuid` of the newest typed prompt ("" when none). */
  readonly lastUserTurn: string;
  /** The newest typed prompt, for finding it on a pane's screen. */
  readonly prompt: string;
  /** When the newest typed prompt was written (ms since the epoch; 0 when unknown). */
  readonly turnStartedAt: number;
  /** True after a tool call without its result yet (an approval may be on screen). */
  readonly callPending: boolean;
  /** True once the newest model response was acknowledged (`qwen-code.api_response`). */
  readonly responded: boolean;
  readonly decidedBy: string;
}

const INITIAL: QwenTurnState = {
  turn: "none",
  completionId: "",
  lastUserTurn: "",
  prompt: "",
  turnStartedAt: 0,
  callPending: false,
  responded: false,
  decidedBy: "no records",
};

/** The error a tool's result carries when the person refused or stopped it. */
const CANCELLED_RESULT = /\[Operation Cancelled\]/;

/** The parts of a record's message. */
export function qwenParts(record: JsonRecord): JsonRecord[] {
  return objects(arrayField(objectField(record, "message"), "parts"));
}

/** The text of a typed prompt record ("" for any other record). */
export function qwenPromptText(record: JsonRecord): string {
  if (record.type !== "user") return "";
  return qwenParts(record)
    .map((p) => stringField(p, "text"))
    .filter((t) => t !== "")
    .join("\n");
}

function uiEvent(record: JsonRecord): string {
  const event = objectField(objectField(record, "systemPayload"), "uiEvent");
  return stringField(event, "event.name");
}

/**
 * Qwen Code's session log has no end-of-turn record (docs/status.md): a typed prompt opens a turn, a
 * reply with text that the CLI acknowledged (`qwen-code.api_response` before it, or its own
 * `usageMetadata`) ends it, a reply cut off by Escape (text without either) or a refused or stopped
 * tool (`[Operation Cancelled]` in its result) interrupts it; a tool call without its result keeps it
 * open (the approval dialog is on screen only). A turn cancelled before any reply writes nothing:
 * the module's screen rule decides that one.
 */
export const qwenSessionReducer: LifecycleReducer<QwenTurnState> = {
  initial: () => INITIAL,
  opensTurn: (record) => qwenPromptText(record) !== "",
  apply(state, record) {
    const at = Date.parse(stringField(record, "timestamp"));
    switch (record.type) {
      case "user": {
        const text = qwenPromptText(record);
        if (text === "") return state;
        return {
          ...state,
          turn: "active",
          lastUserTurn: stringField(record, "uuid"),
          prompt: text,
          turnStartedAt: Number.isFinite(at) ? at : 0,
          callPending: false,
          responded: false,
          decidedBy: "typed prompt",
        };
      }
      case "system":
        return uiEvent(record) === "qwen-code.api_response" ? { ...state, responded: true } : state;
      case "assistant": {
        const parts = qwenParts(record);
        const calls = parts.some((p) => objectField(p, "functionCall") !== undefined);
        const text = parts.some((p) => stringField(p, "text").trim() !== "" && p.thought !== true);
        const acknowledged = state.responded || objectField(record, "usageMetadata") !== undefined;
        if (calls) return { ...state, turn: "active", callPending: true, responded: false, decidedBy: "tool call" };
        if (!text) return state;
        if (!acknowledged) {
          return { ...state, turn: "interrupted", responded: false, decidedBy: "reply cut off (no api_response)" };
        }
        return {
          ...state,
          turn: "completed",
          completionId: stringField(record, "uuid"),
          callPending: false,
          responded: false,
          decidedBy: "reply with text, no end-of-turn record (docs/status.md)",
        };
      }
      case "tool_result": {
        const response = qwenParts(record)
          .map((p) => objectField(objectField(p, "functionResponse"), "response"))
          .find((r) => r !== undefined);
        const cancelled = CANCELLED_RESULT.test(stringField(response, "error"));
        return cancelled
          ? { ...state, turn: "interrupted", callPending: false, decidedBy: "tool result: cancelled" }
          : { ...state, turn: "active", callPending: false, responded: false, decidedBy: "tool result sent" };
      }
      default:
        return state;
    }
  },
};
