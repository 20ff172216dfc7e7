import type { JsonRecord, LifecycleReducer } from "../log-follower.js";
import { arrayField, objectField, objects, stringField } from "../record-fields.js";

/** The newest turn of a Copilot CLI session's `events.jsonl` (docs/status.md, "Copilot CLI"). */
export interface CopilotTurnState {
  readonly turn: "active" | "completed" | "interrupted" | "none";
  /** The `id` of the `assistant.turn_end` that completed the newest turn ("" when none). */
  readonly completionId: string;
  /** The `id` of the newest `user.message` ("" when none). */
  readonly lastUserTurn: string;
  /** The newest prompt as typed, for finding it on a pane's screen. */
  readonly prompt: string;
  /** When the newest prompt was written (ms since the epoch; 0 when unknown). */
  readonly turnStartedAt: number;
  /** True while a model round-trip asked for tools: its `turn_end` is followed by another round-trip. */
  readonly toolsRequested: boolean;
  /** True between `permission.requested` and its `permission.completed` (the dialog is on screen). */
  readonly permissionPending: boolean;
  /** The record that decided `turn`, for the status detail. */
  readonly decidedBy: string;
}

const INITIAL: CopilotTurnState = {
  turn: "none",
  completionId: "",
  lastUserTurn: "",
  prompt: "",
  turnStartedAt: 0,
  toolsRequested: false,
  permissionPending: false,
  decidedBy: "no records",
};

/**
 * Copilot CLI's event stream (docs/status.md, "Copilot CLI"): a `user.message` opens a turn; each
 * model round-trip is an `assistant.turn_start` … `assistant.turn_end` pair, and the `turn_end` after
 * a message without `toolRequests` completes the turn (its `id` is the completion's identity); an
 * `abort` (Escape, a refused approval) interrupts it; `permission.requested` without its
 * `permission.completed` is an approval waiting on screen. Escape Escape before any output rewinds
 * the turn: its records leave the log and a `session.usage_checkpoint` naming a `rewind` follows the
 * previous turn's, which interrupts it.
 */
export const copilotEventsReducer: LifecycleReducer<CopilotTurnState> = {
  initial: () => INITIAL,
  opensTurn: (record) => record.type === "user.message",
  apply(state, record) {
    const data = objectField(record, "data");
    switch (record.type) {
      case "user.message": {
        const at = Date.parse(stringField(record, "timestamp"));
        return {
          ...state,
          turn: "active",
          lastUserTurn: stringField(record, "id"),
          prompt: stringField(data, "content"),
          turnStartedAt: Number.isFinite(at) ? at : 0,
          toolsRequested: false,
          permissionPending: false,
          decidedBy: "user.message",
        };
      }
      case "assistant.turn_start":
        return { ...state, turn: "active", toolsRequested: false, decidedBy: "assistant.turn_start" };
      case "assistant.message":
        return arrayField(data, "toolRequests").length > 0
          ? { ...state, turn: "active", toolsRequested: true, decidedBy: "assistant.message with toolRequests" }
          : state;
      case "permission.requested":
        return { ...state, permissionPending: true, decidedBy: "permission.requested" };
      case "permission.completed":
        return { ...state, permissionPending: false, decidedBy: "permission.completed" };
      case "assistant.turn_end":
        if (state.turn !== "active") return state;
        if (state.toolsRequested) return { ...state, decidedBy: "assistant.turn_end after toolRequests" };
        return {
          ...state,
          turn: "completed",
          completionId: stringField(record, "id"),
          permissionPending: false,
          decidedBy: "assistant.turn_end",
        };
      case "session.usage_checkpoint":
        // Escape Escape before any output takes the turn back out of the log and writes this.
        return rewound(data)
          ? {
              ...state,
              turn: "interrupted",
              toolsRequested: false,
              permissionPending: false,
              decidedBy: "usage_checkpoint after a rewind",
            }
          : state;
      case "abort":
        return {
          ...state,
          turn: "interrupted",
          toolsRequested: false,
          permissionPending: false,
          decidedBy: `abort: ${stringField(data, "reason") || "no reason"}`,
        };
      default:
        return state;
    }
  },
};

/** The text of a record that is a typed prompt ("" for any other record). */
export function copilotPromptText(record: JsonRecord): string {
  return record.type === "user.message" ? stringField(objectField(record, "data"), "content") : "";
}

/** True for a usage checkpoint written after a rewind (`pendingRewriteSources` names it). */
function rewound(data: JsonRecord | undefined): boolean {
  return objects(arrayField(data, "promptCacheBreakState")).some((s) =>
    arrayField(s, "pendingRewriteSources").includes("rewind"),
  );
}
