import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ChangeKind, GetChangesResponseSchema } from "../../gen/staragent/v1/workspace_service_pb.js";
import { safeText } from "./safe-text.js";
import { changesText, diffText, palette } from "./workspace-format.js";

describe("safeText", () => {
  it("shows escape sequences, carriage returns, C1 controls and bidi overrides escaped, and keeps tabs", () => {
    expect(safeText("a\x1b[2Jb\rc\u009bd\u202ee\tf\ng")).toBe("a\\x1b[2Jb\\x0dc\\x9bd\\u202ee\tf\\ng");
    expect(safeText("x\ny", true)).toBe("x\ny");
  });
});

describe("changesText and diffText", () => {
  it("groups files staged, unstaged and untracked with their counts, and escapes names", () => {
    const res = create(GetChangesResponseSchema, {
      repositoryRoot: "/r",
      branch: "main",
      upstream: "origin/main",
      ahead: 2,
      behind: 1,
      files: [
        {
          path: "both.ts",
          change: ChangeKind.MODIFIED,
          staged: true,
          unstaged: true,
          stagedChange: ChangeKind.MODIFIED,
          unstagedChange: ChangeKind.MODIFIED,
          linesAdded: 3,
          linesRemoved: 1,
        },
        {
          path: "new.ts",
          previousPath: "old.ts",
          change: ChangeKind.RENAMED,
          staged: true,
          stagedChange: ChangeKind.RENAMED,
        },
        { path: "evil\x1b]0;x\x07.txt", change: ChangeKind.UNTRACKED, unstaged: true, linesAdded: 1 },
        {
          path: "img.png",
          change: ChangeKind.MODIFIED,
          unstaged: true,
          unstagedChange: ChangeKind.MODIFIED,
          binary: true,
        },
      ],
    });
    expect(changesText(res, palette(false))).toBe(
      [
        "main -> origin/main ahead 2, behind 1  /r",
        "",
        "Staged (2):",
        "  M  both.ts  +3 -1",
        "  R  old.ts -> new.ts  +0 -0",
        "",
        "Unstaged (2):",
        "  M  both.ts  +3 -1",
        "  M  img.png  binary",
        "",
        "Untracked (1):",
        "  ?  evil\\x1b]0;x\\x07.txt  +1 -0",
        "",
      ].join("\n"),
    );
  });

  it("colours a diff's lines only when asked, and never passes a control character through", () => {
    const diff = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\x1b[31m";
    expect(diffText(diff, palette(false))).toBe("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\\x1b[31m");
    const coloured = diffText(diff, palette(true));
    expect(coloured).toContain("\x1b[32m+new\\x1b[31m\x1b[0m");
    expect(coloured).toContain("\x1b[31m-old\x1b[0m");
    expect(coloured).toContain("\x1b[36m@@ -1 +1 @@\x1b[0m");
  });
});
