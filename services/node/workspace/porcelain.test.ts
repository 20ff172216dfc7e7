import { describe, expect, it } from "vitest";
import { ChangeKind } from "../../../gen/staragent/v1/workspace_service_pb.js";
import { parseNumstat, parsePorcelainV2 } from "./porcelain.js";

const OID = "0123456789abcdef0123456789abcdef01234567";
const MODES = "100644 100644 100644";
const HASHES = `${OID} ${OID}`;

describe("parsePorcelainV2", () => {
  it("reads the branch headers, and each record type with its kind, staged and unstaged parts", () => {
    const output = [
      `# branch.oid ${OID}`,
      "# branch.head feature/x",
      "# branch.upstream origin/feature/x",
      "# branch.ab +3 -2",
      `1 .M N... ${MODES} ${HASHES} src/a file.ts`,
      `1 MM N... ${MODES} ${HASHES} both.ts`,
      `1 A. N... 000000 100644 100644 ${HASHES} added.ts`,
      `1 .D N... ${MODES} ${HASHES} gone.ts`,
      `1 .T N... ${MODES} ${HASHES} link`,
      `2 R. N... ${MODES} ${HASHES} R100 ünï.txt`,
      "old name.txt",
      `2 C. N... ${MODES} ${HASHES} C75 copy.ts`,
      "orig.ts",
      `u UU N... ${MODES} 100644 ${OID} ${OID} ${OID} conflict.ts`,
      `1 .M S.M. 160000 160000 160000 ${HASHES} sub`,
      "? new file.txt",
      "! ignored.log",
      "",
    ].join("\0");
    const parsed = parsePorcelainV2(output);
    expect(parsed.branch).toEqual({ oid: OID, head: "feature/x", upstream: "origin/feature/x", ahead: 3, behind: 2 });
    expect(parsed.entries.map((e) => [e.path, e.change, e.staged, e.unstaged, e.previousPath, e.submodule])).toEqual([
      ["src/a file.ts", ChangeKind.MODIFIED, ChangeKind.UNSPECIFIED, ChangeKind.MODIFIED, "", false],
      ["both.ts", ChangeKind.MODIFIED, ChangeKind.MODIFIED, ChangeKind.MODIFIED, "", false],
      ["added.ts", ChangeKind.ADDED, ChangeKind.ADDED, ChangeKind.UNSPECIFIED, "", false],
      ["gone.ts", ChangeKind.DELETED, ChangeKind.UNSPECIFIED, ChangeKind.DELETED, "", false],
      ["link", ChangeKind.TYPE_CHANGED, ChangeKind.UNSPECIFIED, ChangeKind.TYPE_CHANGED, "", false],
      ["ünï.txt", ChangeKind.RENAMED, ChangeKind.RENAMED, ChangeKind.UNSPECIFIED, "old name.txt", false],
      ["copy.ts", ChangeKind.COPIED, ChangeKind.COPIED, ChangeKind.UNSPECIFIED, "orig.ts", false],
      ["conflict.ts", ChangeKind.UNMERGED, ChangeKind.UNMERGED, ChangeKind.UNMERGED, "", false],
      ["sub", ChangeKind.MODIFIED, ChangeKind.UNSPECIFIED, ChangeKind.MODIFIED, "", true],
      ["new file.txt", ChangeKind.UNTRACKED, ChangeKind.UNSPECIFIED, ChangeKind.UNTRACKED, "", false],
    ]);
  });

  it("reads a detached HEAD and a repository with no commit as empty branch and oid", () => {
    expect(parsePorcelainV2(`# branch.oid ${OID}\0# branch.head (detached)\0`).branch).toMatchObject({
      oid: OID,
      head: "",
    });
    expect(parsePorcelainV2("# branch.oid (initial)\0# branch.head main\0").branch).toMatchObject({
      oid: "",
      head: "main",
    });
  });

  it("skips records cut short or of unknown type instead of misreading them", () => {
    const parsed = parsePorcelainV2(`1 .M N... 100644\0x what\0? \0${"1 .M N... "}\0? kept\0`);
    expect(parsed.entries.map((e) => e.path)).toEqual(["kept"]);
  });
});

describe("parseNumstat", () => {
  it("reads counts, binary files and the new path of a rename", () => {
    const counts = parseNumstat("3\t1\ta b.ts\0-\t-\timg.png\u00000\t0\t\0old.txt\0new.txt\0junk\0");
    expect([...counts]).toEqual([
      ["a b.ts", { added: 3, removed: 1, binary: false }],
      ["img.png", { added: 0, removed: 0, binary: true }],
      ["new.txt", { added: 0, removed: 0, binary: false }],
    ]);
  });
});
