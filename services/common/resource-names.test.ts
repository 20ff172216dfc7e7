import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { parseParent, parseSessionName, sessionResourceName, validateSessionName } from "./resource-names.js";

function invalid(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    const e = ConnectError.from(err);
    if (e.code !== Code.InvalidArgument) throw new Error(`expected INVALID_ARGUMENT, got ${Code[e.code]}`);
    return e.rawMessage;
  }
  throw new Error("expected INVALID_ARGUMENT, got success");
}

describe("session names", () => {
  it("accepts letters, digits, '_' and '-', 1 to 64 characters", () => {
    expect(() => validateSessionName("a", "session_id")).not.toThrow();
    expect(() => validateSessionName("Fix_bug-2", "session_id")).not.toThrow();
    expect(() => validateSessionName("x".repeat(64), "session_id")).not.toThrow();
  });

  it.each(["", "x".repeat(65), "has space", "dot.name", "colon:name", "semi;colon", "=exact", "ünï"])(
    "refuses %j naming the field",
    (name) => {
      expect(invalid(() => validateSessionName(name, "session_id"))).toMatch(/^session_id: /);
    },
  );

  it("parses and formats resource names", () => {
    expect(parseSessionName("nodes/local/sessions/fix-bug")).toEqual({ node: "local", session: "fix-bug" });
    expect(parseSessionName("nodes/-/sessions/a")).toEqual({ node: "-", session: "a" });
    expect(sessionResourceName("w1", "a")).toBe("nodes/w1/sessions/a");
  });

  it.each([
    "fix-bug",
    "nodes/local/fix-bug",
    "nodes/local/sessions/",
    "nodes/local/sessions/a/b",
    "nodes/Local/sessions/a",
    "nodes/local/sessions/bad name",
  ])("refuses the resource name %j naming the field", (name) => {
    expect(invalid(() => parseSessionName(name))).toMatch(/^name: /);
  });

  it("parses parents, empty meaning every node", () => {
    expect(parseParent("")).toBe("-");
    expect(parseParent("nodes/-")).toBe("-");
    expect(parseParent("nodes/w-1")).toBe("w-1");
    expect(invalid(() => parseParent("nodes/"))).toMatch(/^parent: /);
    expect(invalid(() => parseParent("local"))).toMatch(/^parent: /);
    expect(invalid(() => parseParent("nodes/1abc"))).toMatch(/^parent: /);
  });
});
