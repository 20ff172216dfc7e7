import { describe, expect, it } from "vitest";
import { createLogger, parseLogLevel } from "./log.js";

describe("createLogger", () => {
  it("drops lines below its level and scopes children", () => {
    const lines: string[] = [];
    const log = createLogger("hub", "warn", (l) => lines.push(l));
    log.info("hidden");
    log.warn("shown", { n: 3 });
    log.child("web").error("child");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^\S+Z WARN {2}hub shown n=3$/);
    expect(lines[1]).toMatch(/ERROR hub\/web child$/);
  });

  it("quotes values so that a value can never forge a second line", () => {
    const lines: string[] = [];
    const log = createLogger("x", "info", (l) => lines.push(l));
    log.info("a\nFAKE line", { path: "/ok/path", evil: "x\nINFO forged", err: new Error("boom\nmore") });
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain("\n");
    expect(lines[0]).toContain("path=/ok/path");
    expect(lines[0]).toContain('evil="x\\nINFO forged"');
    expect(lines[0]).toContain('err="boom\\nmore"');
  });

  it("parses level names and falls back to info", () => {
    expect(parseLogLevel("debug")).toBe("debug");
    expect(parseLogLevel("error")).toBe("error");
    expect(parseLogLevel("loud")).toBe("info");
    expect(parseLogLevel(undefined)).toBe("info");
  });
});
