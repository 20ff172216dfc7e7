import { describe, expect, it } from "vitest";
import { alignColumns } from "../../services/cli/format.js";
import { terminalSafe } from "../../services/cli/terminal-text.js";
import { fuzz } from "./fuzz.js";

/**
 * What a terminal must never receive from untrusted text: controls, C1, line separators, bidi
 * controls, and the invisible format characters that hide text (tag characters outside a flag).
 */
const ACTED_ON =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u200b\u2060-\u2064\u206a-\u206f\ufeff\u180e\u115f\u1160\u3164\uffa0\ufff9-\ufffb\u{e0000}-\u{e007f}]/u;
/** An emoji flag's tag sequence, which stays whole. */
const FLAG = /\u{1f3f4}[\u{e0020}-\u{e007e}]+\u{e007f}/gu;

describe("fuzz: text printed by the staragent command", () => {
  it("leaves nothing a terminal acts on, and loses no character", async () => {
    await fuzz(
      "terminal-safe text",
      (r) => ({ text: r.text(200), lines: r.chance(0.5) }),
      ({ text, lines }) => {
        const safe = terminalSafe(text, { lines });
        expect(safe.replace(FLAG, "")).not.toMatch(ACTED_ON);
        if (!lines) expect(safe).not.toMatch(/[\n\t]/);
        // Only escapes were added: the safe text is never shorter, and the same when nothing was unsafe.
        expect(safe.length).toBeGreaterThanOrEqual(text.length);
        if (!ACTED_ON.test(text.replace(FLAG, "")) && !/[\n\t]/.test(text)) {
          expect(safe).toBe(text);
        }
      },
    );
  });

  it("tables have one line per row whatever the cells hold", async () => {
    await fuzz(
      "terminal-safe tables",
      (r) => Array.from({ length: 1 + r.int(6) }, () => Array.from({ length: 3 }, () => r.text(40))),
      (rows) => {
        expect(alignColumns(rows).split("\n")).toHaveLength(rows.length);
      },
    );
  });
});
