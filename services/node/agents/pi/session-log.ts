import type { JsonRecord, LifecycleReducer } from "../log-follower.js";
import { arrayField, objectField, objects, stringField } from "../record-fields.js";

/** The newest turn of a pi session file (docs/status.md, "pi"). */
export interface PiTurnState {
  readonly turn: "active" | "completed" | "interrupted" | "none";
  /** The `id` of the assistant message whose `stopReason` ended the newest turn ("" when none). */
  readonly completionId: string;
  /** The `id` of the newest user message ("" when none). */
  readonly lastUserTurn: string;
  /** The newest prompt as typed, for finding it on a pane's screen. */
  readonly prompt: string;
  /** When the newest prompt was written (ms since the epoch; 0 when unknown). */
  readonly turnStartedAt: number;
  /** True while the newest assistant message asked for a tool whose result is not written yet. */
  readonly toolPending: boolean;
  /** The record that decided `turn`, for the status detail. */
  readonly decidedBy: string;
}

const INITIAL: PiTurnState = {
  turn: "none",
  completionId: "",
  lastUserTurn: "",
  prompt: "",
  turnStartedAt: 0,
  toolPending: false,
  decidedBy: "no records",
};

/** The `message` of a `type: "message"` record, if it is one. */
export function piMessage(record: JsonRecord): JsonRecord | undefined {
  return record.type === "message" ? objectField(record, "message") : undefined;
}

/** The text parts of a message's content, joined. */
export function piText(message: JsonRecord | undefined): string {
  return objects(arrayField(message, "content"))
    .filter((part) => part.type === "text")
    .map((part) => stringField(part, "text"))
    .join("");
}

/**
 * pi's session file (session format v3, a tree of `id`/`parentId` records): a user message opens a
 * turn; an assistant message's `stopReason` says what follows it: `toolUse` (a tool runs, then the
 * model again), `stop` (the turn ended: its `id` is the completion's identity), `aborted` (Escape),
 * `error` (the request failed: the turn ended too, with its error shown). A `toolResult` answers a
 * tool call; an assistant message asking for a tool that has none yet is a tool running or waiting
 * for an extension's confirmation (pi writes nothing for that dialog).
 */
export const piSessionReducer: LifecycleReducer<PiTurnState> = {
  initial: () => INITIAL,
  opensTurn: (record) => piMessage(record)?.role === "user",
  apply(state, record) {
    const message = piMessage(record);
    if (!message) return state;
    switch (message.role) {
      case "user": {
        const at = Date.parse(stringField(record, "timestamp"));
        return {
          ...state,
          turn: "active",
          lastUserTurn: stringField(record, "id"),
          prompt: piText(message),
          turnStartedAt: Number.isFinite(at) ? at : 0,
          toolPending: false,
          decidedBy: "user message",
        };
      }
      case "assistant": {
        const reason = stringField(message, "stopReason");
        if (reason === "toolUse") {
          return { ...state, turn: "active", toolPending: true, decidedBy: "assistant message, stopReason toolUse" };
        }
        if (reason === "aborted") {
          return { ...state, turn: "interrupted", toolPending: false, decidedBy: "stopReason aborted" };
        }
        if (reason === "stop" || reason === "length" || reason === "error") {
          return {
            ...state,
            turn: "completed",
            completionId: stringField(record, "id"),
            toolPending: false,
            decidedBy: `stopReason ${reason}`,
          };
        }
        return state;
      }
      case "toolResult":
        return {
          ...state,
          turn: state.turn === "none" ? "none" : "active",
          toolPending: false,
          decidedBy: "toolResult",
        };
      default:
        return state;
    }
  },
};

/** The text of a record that is a typed prompt ("" for any other record). */
export function piPromptText(record: JsonRecord): string {
  const message = piMessage(record);
  return message?.role === "user" ? piText(message) : "";
}
