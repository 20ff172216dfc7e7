import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { PendingPromptSchema, PromptEffect, PromptKind } from "../../gen/staragent/v1/session_pb.js";
import { describePrompt, printable, promptSubject } from "./prompt-format.js";

describe("prompt output", () => {
  it("shows control characters from a pane instead of sending them to the terminal", () => {
    expect(printable("rm -rf build\x1b]0;owned\x07")).toBe("rm -rf build\\x1b]0;owned\\x07");
    expect(printable("a\tb\nc")).toBe("a\tb\nc");
  });

  it("shows the whole command, the truncation and every choice", () => {
    const prompt = create(PendingPromptSchema, {
      kind: PromptKind.APPROVAL,
      question: "Do you want to proceed?",
      command: "git push --force\n  origin main",
      truncated: true,
      choices: [
        { id: "1", label: "Yes", effect: PromptEffect.ALLOW_ONCE },
        { id: "3", label: "No, and tell Claude", effect: PromptEffect.TELL_INSTEAD },
      ],
    });
    expect(promptSubject(prompt)).toBe("git push --force ⏎   origin main");
    expect(describePrompt(prompt)).toBe(
      [
        "approval: Do you want to proceed?",
        "command:",
        "    git push --force",
        "      origin main",
        "(the screen cut this prompt: what it is about may be incomplete)",
        "choices:",
        "  1) Yes  [allow-once]",
        "  3) No, and tell Claude  [tell-instead]",
      ].join("\n"),
    );
  });
});
