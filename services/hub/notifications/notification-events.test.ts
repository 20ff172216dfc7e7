import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  PendingPromptSchema,
  PromptKind,
  SessionSchema,
  SessionStatus,
  StatusReason,
} from "../../../gen/staragent/v1/session_pb.js";
import { MAX_SUMMARY, notificationOf, turnSummary } from "./notification-events.js";

const base = { name: "nodes/w1/sessions/fix-bug", node: "w1", tmuxSession: "fix-bug" };

describe("notificationOf", () => {
  it("keys a prompt by its fingerprint and says what it asks about", () => {
    const s = create(SessionSchema, {
      ...base,
      status: SessionStatus.REVIEW,
      statusReason: StatusReason.INPUT_PROMPT,
      prompt: "Do you want to proceed?",
      pendingPrompt: create(PendingPromptSchema, {
        kind: PromptKind.APPROVAL,
        command: "npm test",
        fingerprint: "fp1",
      }),
    });
    expect(notificationOf(s)).toEqual({
      kind: "prompt",
      session: base.name,
      node: "w1",
      sessionName: "fix-bug",
      key: "prompt:fp1",
      title: "fix-bug on w1",
      summary: "wants to run `npm test`",
      path: "/sessions/w1/fix-bug",
      detailed: true,
    });
    // Known only from the CLI's state (no prompt read from the screen yet): not detailed.
    const vague = create(SessionSchema, { ...s, pendingPrompt: undefined });
    expect(notificationOf(vague)?.detailed).toBe(false);
  });

  it("keys a finished turn by its completion id, and ignores what is not news", () => {
    const done = create(SessionSchema, {
      ...base,
      status: SessionStatus.REVIEW,
      statusReason: StatusReason.UNSEEN_COMPLETION,
      completionId: "turn-7",
    });
    expect(notificationOf(done)?.key).toBe("turn:turn-7");
    // A node's last known state while it is unreachable is not a new event.
    expect(notificationOf(create(SessionSchema, { ...done, nodeUnreachable: true }))).toBeUndefined();
    expect(notificationOf(create(SessionSchema, { ...base, status: SessionStatus.WORKING }))).toBeUndefined();
    expect(
      notificationOf(create(SessionSchema, { ...base, status: SessionStatus.IDLE, completionId: "turn-7" })),
    ).toBeUndefined();
  });

  it("keys a prompt without a fingerprint by its text, and keeps the summary to one line", () => {
    const s = create(SessionSchema, {
      ...base,
      status: SessionStatus.REVIEW,
      statusReason: StatusReason.INPUT_PROMPT,
      prompt: `Which one?\n${"x".repeat(500)}`,
    });
    const event = notificationOf(s);
    expect(event?.key).toMatch(/^prompt:[A-Za-z0-9_-]{22}$/);
    expect(event?.summary).not.toContain("\n");
    expect(event?.summary.length).toBeLessThanOrEqual(MAX_SUMMARY);
  });
});

describe("turnSummary", () => {
  it("is the reply's first line only, without control characters", () => {
    expect(turnSummary("\n  All tests pass.\nHere is the diff:\n+secret")).toBe("finished: All tests pass.");
    expect(turnSummary("\u001b[31mred\u001b[0m")).toBe("finished: [31mred [0m");
    expect(turnSummary(undefined)).toBe("finished its turn");
    expect(turnSummary("   \n ")).toBe("finished its turn");
  });
});
