import { describe, expect, it } from "vitest";
import { linkify } from "./linkify.js";

/** The parts of linkify's output as plain data: text stays text, links show their target. */
function parts(text: string): Array<string | { href: unknown }> {
  return linkify(text).map((p) => (typeof p === "string" ? p : { href: p.values[0] }));
}

describe("linkify", () => {
  it("makes http(s) URLs links and leaves everything else as text", () => {
    expect(parts("see https://example.com/a?b=1, then http://x.test.")).toEqual([
      "see ",
      { href: "https://example.com/a?b=1" },
      ", then ",
      { href: "http://x.test/" },
      ".",
    ]);
  });

  it("never turns markup or other schemes into links", () => {
    const hostile = `<img src=x onerror=alert(1)> <script>alert(1)</script> javascript:alert(1) data:text/html,<b>x</b> file:///etc/passwd`;
    expect(parts(hostile)).toEqual([hostile]);
  });
});
