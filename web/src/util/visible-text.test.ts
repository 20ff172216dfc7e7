import { describe, expect, it } from "vitest";
import { visibleText } from "./visible-text.js";

describe("visibleText", () => {
  it("shows bidi controls as escapes and leaves other text alone", () => {
    expect(visibleText("report\u202etxt.exe")).toBe("report\\u202etxt.exe");
    expect(visibleText("\u2066a\u2069\u200e\u061c")).toBe("\\u2066a\\u2069\\u200e\\u061c");
    expect(visibleText("日本 🚀 ~/src/app-1")).toBe("日本 🚀 ~/src/app-1");
  });

  it("shows invisible format characters and tag characters (hidden text) as escapes", () => {
    expect(visibleText("a\u200bb\u2060c\ufeffd\u2064e\u3164f")).toBe("a\\u200bb\\u2060c\\ufeffd\\u2064e\\u3164f");
    // "Hi" spelled in tag characters after visible text: what an agent would never see a person read.
    expect(visibleText("done\u{e0048}\u{e0069}")).toBe("done\\u{e0048}\\u{e0069}");
  });

  it("keeps what emoji and scripts need: joiners, variation selectors, a flag's tag sequence", () => {
    const family = "👨\u200d👩\u200d👧";
    const scotland = "\u{1f3f4}\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}";
    const persian = "می\u200cخواهم";
    const heart = "❤\ufe0f";
    expect(visibleText(`${family} ${scotland} ${persian} ${heart}`)).toBe(`${family} ${scotland} ${persian} ${heart}`);
  });
});
