import { describe, expect, it } from "vitest";
import { alignColumns } from "./format.js";
import { hasBidiControl, terminalSafe } from "./terminal-text.js";

describe("terminalSafe", () => {
  it("shows every control a terminal acts on as a visible escape", () => {
    expect(terminalSafe("a\x1b]52;c;cm0gLXJmIH4=\x07b")).toBe("a\\e]52;c;cm0gLXJmIH4=\\x07b");
    expect(terminalSafe("x\ry\nz\tw\x7f\x9b")).toBe("x\\ry\\nz\\tw\\x7f\\x9b");
    expect(terminalSafe("abc\u202edef\u2066\u2028")).toBe("abc\\u202edef\\u2066\\u2028");
  });

  it("keeps newlines and tabs of multi-line text, and text without controls as it is", () => {
    expect(terminalSafe("one\n\ttwo\r\n", { lines: true })).toBe("one\n\ttwo\\r\n");
    expect(terminalSafe("日本 🚀 ─│ é ~/src/app")).toBe("日本 🚀 ─│ é ~/src/app");
  });

  it("shows invisible format characters and stray tag characters escaped, and keeps joiners and a flag's tags", () => {
    expect(terminalSafe("a\u200bb\u2060c\ufeffd\u{e0041}")).toBe("a\\u200bb\\u2060c\\ufeffd\\u{e0041}");
    const kept = "👨\u200d👩 \u{1f3f4}\u{e0067}\u{e0062}\u{e0077}\u{e006c}\u{e0073}\u{e007f} ❤\ufe0f";
    expect(terminalSafe(kept)).toBe(kept);
  });

  it("tells bidi controls", () => {
    expect(hasBidiControl("name\u202e")).toBe(true);
    expect(hasBidiControl("name")).toBe(false);
  });
});

describe("alignColumns", () => {
  it("keeps a row on one line whatever its cells hold", () => {
    const table = alignColumns([
      ["A", "B"],
      ["x\nforged  row", "y\x1b[2J"],
    ]);
    expect(table.split("\n")).toEqual([`${"A".padEnd(14)}  B`, "x\\nforged  row  y\\e[2J"]);
  });
});
