import { describe, expect, it } from "vitest";
import { pairedWords, parseUnifiedDiff, sideBySide } from "./diff-model.js";

const DIFF = [
  "diff --git a/x.ts b/x.ts",
  "index 1..2 100644",
  "--- a/x.ts",
  "+++ b/x.ts",
  "@@ -1,3 +1,4 @@",
  " keep",
  "-const a = 1;",
  "+const a = 2;",
  "+added",
  " end",
  "",
].join("\n");

describe("diff model", () => {
  it("numbers the lines of each hunk in the old and the new file, headers left out", () => {
    const [hunk] = parseUnifiedDiff(DIFF);
    expect(hunk?.header).toBe("@@ -1,3 +1,4 @@");
    expect(hunk?.lines).toEqual([
      { kind: "context", text: "keep", oldNo: 1, newNo: 1 },
      { kind: "del", text: "const a = 1;", oldNo: 2 },
      { kind: "add", text: "const a = 2;", newNo: 2 },
      { kind: "add", text: "added", newNo: 3 },
      { kind: "context", text: "end", oldNo: 3, newNo: 4 },
    ]);
  });

  it("pairs a removed run with the added run after it, side by side, and marks the changed words", () => {
    const lines = parseUnifiedDiff(DIFF)[0]?.lines ?? [];
    const rows = sideBySide(lines);
    expect(rows.map((r) => [r.left?.text, r.right?.text])).toEqual([
      ["keep", "keep"],
      ["const a = 1;", "const a = 2;"],
      [undefined, "added"],
      ["end", "end"],
    ]);
    const words = pairedWords(lines);
    expect(words.get(lines[1] as never)).toEqual([
      { text: "const a = ", changed: false },
      { text: "1", changed: true },
      { text: ";", changed: false },
    ]);
    expect(words.get(lines[2] as never)?.filter((p) => p.changed)).toEqual([{ text: "2", changed: true }]);
    expect(words.has(lines[3] as never)).toBe(false);
  });
});
