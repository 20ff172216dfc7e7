import type { MessageInitShape } from "@bufbuild/protobuf";
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { type PendingPromptSchema, PromptKind, SessionSchema } from "../../../gen/staragent/v1/session_pb.js";
import { MAX_SUMMARY_SUBJECT, pendingPromptWants } from "./prompt-summary.js";

const session = (pendingPrompt?: MessageInitShape<typeof PendingPromptSchema>) =>
  create(SessionSchema, { tmuxSession: "fix-bug", node: "w1", pendingPrompt });

describe("pendingPromptWants", () => {
  it("says what the prompt is about", () => {
    expect(pendingPromptWants(session({ kind: PromptKind.APPROVAL, command: "npm test" }))).toBe(
      "wants to run `npm test`",
    );
    expect(pendingPromptWants(session({ kind: PromptKind.APPROVAL, filePath: "src/a.ts" }))).toBe(
      "wants to edit src/a.ts",
    );
    expect(pendingPromptWants(session({ kind: PromptKind.QUESTION, question: "Which database?" }))).toBe(
      "asks: Which database?",
    );
    expect(pendingPromptWants(session({ kind: PromptKind.PLAN, question: "Would you like to proceed?" }))).toBe(
      "asks you to approve its plan",
    );
    expect(pendingPromptWants(session())).toBeUndefined();
  });

  it("keeps it to one line of bounded length", () => {
    const long = pendingPromptWants(session({ command: `echo ${"x".repeat(200)}\nrm -rf build` })) ?? "";
    expect(long).not.toContain("\n");
    expect(long).toBe(`wants to run \`echo ${"x".repeat(MAX_SUMMARY_SUBJECT - 5)}…\``);
  });
});
