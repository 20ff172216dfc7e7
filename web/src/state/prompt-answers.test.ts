import { describe, expect, it } from "vitest";
import { PromptAnswers } from "./prompt-answers.js";

describe("PromptAnswers", () => {
  it("keeps an answer for its prompt only, and tells subscribers when one is recorded", () => {
    const answers = new PromptAnswers();
    let heard = 0;
    const unsubscribe = answers.subscribe(() => heard++);
    answers.record("nodes/local/sessions/a", { label: "Yes", fingerprint: "f1" });
    expect(heard).toBe(1);
    // A row re-created later reads the same answer while the same prompt is pending.
    expect(answers.get("nodes/local/sessions/a", "f1")).toEqual({ label: "Yes", fingerprint: "f1" });
    expect(answers.get("nodes/local/sessions/a", "f1")?.label).toBe("Yes");
    expect(answers.get("nodes/local/sessions/b", "f1")).toBeUndefined();
    // Another prompt came up: the answer is forgotten, also for the old fingerprint.
    expect(answers.get("nodes/local/sessions/a", "f2")).toBeUndefined();
    expect(answers.get("nodes/local/sessions/a", "f1")).toBeUndefined();
    unsubscribe();
    answers.record("nodes/local/sessions/a", { label: "No", fingerprint: "f3" });
    expect(heard).toBe(1);
  });

  it("forgets the oldest answers past its bound", () => {
    const answers = new PromptAnswers();
    for (let i = 0; i < 501; i++) answers.record(`s${i}`, { label: "Yes", fingerprint: `f${i}` });
    expect(answers.get("s0", "f0")).toBeUndefined();
    expect(answers.get("s1", "f1")?.label).toBe("Yes");
    expect(answers.get("s500", "f500")?.label).toBe("Yes");
  });
});
