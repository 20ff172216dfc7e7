import { SessionStatus, StatusReason } from "../../../gen/staragent/v1/session_pb.js";
import type { AgentSignals } from "../agents/agent.js";

/**
 * docs/status.md: a visible prompt beats an active turn, which beats an unseen completion; otherwise
 * idle. `seenCompletionId` is what MarkSessionSeen stored for the session ("" when nothing).
 */
export function decideStatus(
  signals: AgentSignals,
  seenCompletionId: string,
): { status: SessionStatus; reason: StatusReason } {
  if (signals.prompt) return { status: SessionStatus.REVIEW, reason: StatusReason.INPUT_PROMPT };
  switch (signals.turn) {
    case "active":
      return { status: SessionStatus.WORKING, reason: StatusReason.ACTIVE_TURN };
    case "completed":
      return signals.completionId !== "" && signals.completionId === seenCompletionId
        ? { status: SessionStatus.IDLE, reason: StatusReason.SEEN_COMPLETION }
        : { status: SessionStatus.REVIEW, reason: StatusReason.UNSEEN_COMPLETION };
    case "interrupted":
      return { status: SessionStatus.IDLE, reason: StatusReason.INTERRUPTED };
    case "none":
      return { status: SessionStatus.IDLE, reason: StatusReason.NO_TURN };
  }
}
