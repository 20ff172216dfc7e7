import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { SessionSchema, SessionStatus, StatusReason } from "../../../gen/staragent/v1/session_pb.js";
import { reasonParts, reasonText } from "./session-labels.js";

describe("reasonParts", () => {
  it("parts a finished turn's why into the state and the reply's last line, which the compact row shows alone", () => {
    const finished = create(SessionSchema, {
      status: SessionStatus.REVIEW,
      statusReason: StatusReason.UNSEEN_COMPLETION,
      replyExcerpt: "All 12 tests pass.",
    });
    expect(reasonParts(finished)).toEqual({ lead: "Turn finished: ", rest: "All 12 tests pass." });
    const seen = create(SessionSchema, { ...finished, statusReason: StatusReason.SEEN_COMPLETION });
    expect(reasonParts(seen)).toEqual({ lead: "Turn finished, seen: ", rest: "All 12 tests pass." });
  });

  it("keeps any other why whole, in the lead", () => {
    const cases = [
      create(SessionSchema, { statusReason: StatusReason.UNSEEN_COMPLETION }),
      create(SessionSchema, { statusReason: StatusReason.ACTIVE_TURN, replyExcerpt: "older reply" }),
      create(SessionSchema, { statusReason: StatusReason.INPUT_PROMPT, prompt: "Do you want to proceed?" }),
    ];
    for (const s of cases) expect(reasonParts(s)).toEqual({ lead: reasonText(s), rest: "" });
  });
});
