import { describe, expect, it } from "vitest";
import { ChangeKind } from "../../gen/staragent/v1/workspace_service_pb.js";
import { parseNumstat, parsePorcelainV2 } from "../../services/node/workspace/porcelain.js";
import { fuzz, mutateText, type Random } from "./fuzz.js";

const KINDS = new Set(Object.values(ChangeKind).filter((v) => typeof v === "number"));

/** A path git could print: mostly plain, now and then spaces, UTF-8, controls or anything at all. */
function path(r: Random): string {
  const p = r.chance(0.7) ? `${r.pick(["src", "a b", "ünï", "日本"])}/${r.int(100)}.ts` : r.text(60);
  return p.replaceAll("\0", "");
}

function oid(r: Random): string {
  return r.chance(0.9) ? "0123456789abcdef0123456789abcdef01234567" : r.text(10);
}

/** A porcelain-v2 `-z` status as git prints it: headers, then records of each type. */
function status(r: Random): string {
  const records: string[] = [`# branch.oid ${r.chance(0.1) ? "(initial)" : oid(r)}`];
  records.push(`# branch.head ${r.chance(0.2) ? "(detached)" : r.pick(["main", "feature/x", r.text(20)])}`);
  if (r.chance(0.5)) records.push(`# branch.upstream origin/main`, `# branch.ab +${r.int(9)} -${r.int(9)}`);
  const xy = () => `${r.pick([".", "M", "A", "D", "R", "C", "T", "U"])}${r.pick([".", "M", "D", "T"])}`;
  for (let i = r.int(12); i > 0; i--) {
    const sub = r.pick(["N...", "SC..", "S.M.", "S..U"]);
    switch (r.int(5)) {
      case 0:
        records.push(`1 ${xy()} ${sub} 100644 100644 100644 ${oid(r)} ${oid(r)} ${path(r)}`);
        break;
      case 1:
        records.push(`2 R. ${sub} 100644 100644 100644 ${oid(r)} ${oid(r)} R${r.int(101)} ${path(r)}`, path(r));
        break;
      case 2:
        records.push(`u UU ${sub} 100644 100644 100644 100644 ${oid(r)} ${oid(r)} ${oid(r)} ${path(r)}`);
        break;
      case 3:
        records.push(`? ${path(r)}`);
        break;
      default:
        records.push(`! ${path(r)}`);
    }
  }
  return `${records.join("\0")}\0`;
}

describe("fuzz: git status and numstat output", () => {
  it("parsePorcelainV2 never throws on cut, mixed or garbled output, and every entry it gives is well formed", async () => {
    await fuzz(
      "git porcelain v2",
      (r) => {
        const text = status(r);
        return r.chance(0.5) ? text : mutateText(r, text);
      },
      (output) => {
        const parsed = parsePorcelainV2(output);
        expect(Number.isSafeInteger(parsed.branch.ahead) && parsed.branch.ahead >= 0).toBe(true);
        expect(Number.isSafeInteger(parsed.branch.behind) && parsed.branch.behind >= 0).toBe(true);
        for (const e of parsed.entries) {
          expect(e.path).not.toBe("");
          expect(e.path).not.toContain("\0");
          expect(KINDS.has(e.change) && e.change !== ChangeKind.UNSPECIFIED).toBe(true);
          expect(KINDS.has(e.staged) && KINDS.has(e.unstaged)).toBe(true);
        }
      },
    );
  });

  it("parsePorcelainV2 gives back every path of well-formed output exactly, whatever the paths hold", async () => {
    await fuzz(
      "git porcelain v2 round trip",
      (r) => Array.from({ length: 1 + r.int(8) }, () => path(r) || "x"),
      (paths) => {
        const output = paths.map((p) => `1 .M N... 100644 100644 100644 abc abc ${p}\0`).join("");
        expect(parsePorcelainV2(output).entries.map((e) => e.path)).toEqual(paths);
      },
    );
  });

  it("parseNumstat never throws and gives only whole, non-negative counts", async () => {
    await fuzz(
      "git numstat",
      (r) => {
        let text = "";
        for (let i = r.int(8); i > 0; i--) {
          text += r.chance(0.2)
            ? `-\t-\t${path(r)}\0`
            : `${r.int(999)}\t${r.int(999)}\t${r.chance(0.2) ? `\0${path(r)}\0` : ""}${path(r)}\0`;
        }
        return r.chance(0.5) ? text : mutateText(r, text);
      },
      (output) => {
        for (const [p, c] of parseNumstat(output)) {
          expect(p).not.toBe("");
          for (const n of [c.added, c.removed]) expect(Number.isSafeInteger(n) && n >= 0).toBe(true);
        }
      },
    );
  });
});
