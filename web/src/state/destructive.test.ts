import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { PendingPromptSchema } from "../../../gen/staragent/v1/session_pb.js";
import { destructiveReason, outsideFolder } from "./destructive.js";

const CWD = "/home/u/work/demo";
const command = (c: string) => destructiveReason(create(PendingPromptSchema, { command: c }), CWD);
const edit = (p: string) => destructiveReason(create(PendingPromptSchema, { filePath: p }), CWD);

describe("destructiveReason", () => {
  it.each([
    ["rm -rf build", "it deletes files"],
    ["cd src && rm old.ts", "it deletes files"],
    ["sudo rm /etc/hosts", "it deletes files"],
    ["find . -name '*.tmp' -delete", "it deletes files"],
    ["git push --force origin main", "it force-pushes"],
    ["git push -f", "it force-pushes"],
    ["git push origin +main", "it force-pushes"],
    ["git reset --hard HEAD~3", "it discards changes"],
    ["git clean -fdx", "it discards changes"],
    ["git push origin --delete feature", "it deletes a remote branch"],
    ["echo hi > README.md", "it overwrites a file"],
    ["dd if=/dev/zero of=disk.img", "it deletes or overwrites data"],
    ["psql -c 'DROP TABLE users'", "it deletes data"],
  ])("%s needs a second step (%s)", (c, why) => {
    expect(command(c)).toBe(why);
  });

  it.each([
    "npm test",
    "git push origin main",
    "echo hi >> notes.txt",
    "ls -la 2>&1 | grep x",
    "grep -r 'rm' src",
    "npm run format",
  ])("%s does not", (c) => {
    expect(command(c)).toBeUndefined();
  });

  it("asks for a second step for an edit outside the working folder, not inside it", () => {
    expect(edit("src/a.ts")).toBeUndefined();
    expect(edit(`${CWD}/src/a.ts`)).toBeUndefined();
    expect(edit("../other/a.ts")).toBe("it writes outside the working folder");
    expect(edit("/etc/passwd")).toBe("it writes outside the working folder");
    expect(edit(`${CWD}-evil/a.ts`)).toBe("it writes outside the working folder");
  });

  it("asks for one when the screen cut what the prompt is about", () => {
    expect(destructiveReason(create(PendingPromptSchema, { truncated: true, detail: "git push --fo" }), CWD)).toBe(
      "the screen cut what it is about",
    );
  });

  it("resolves dots in paths", () => {
    expect(outsideFolder("src/../../x", CWD)).toBe(true);
    expect(outsideFolder("./src/./a", CWD)).toBe(false);
  });
});
