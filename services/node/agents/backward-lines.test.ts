import { appendFile, mkdtemp, open, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readLinesBackward } from "./backward-lines.js";
import { type LifecycleReducer, LogFollower } from "./log-follower.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sa-backward-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function backward(content: string, blockBytes: number, stopAt?: string): Promise<string[]> {
  const path = join(dir, `f-${blockBytes}-${content.length}.log`);
  await writeFile(path, content);
  const file = await open(path, "r");
  try {
    const seen: string[] = [];
    const size = (await file.stat()).size;
    await readLinesBackward(
      file,
      size,
      (line) => {
        seen.push(line.toString("utf8"));
        return line.toString("utf8") === stopAt;
      },
      { blockBytes },
    );
    return seen;
  } finally {
    await file.close();
  }
}

describe("readLinesBackward", () => {
  const lines = ["first", "a much longer second line with ünïcödé", "", "3", "fourth line"];
  const content = `${lines.join("\n")}\n`;

  it.each([1, 2, 3, 7, 64, 65536])("yields every complete line newest first with %i-byte blocks", async (block) => {
    expect(await backward(content, block)).toEqual(lines.filter((l) => l !== "").reverse());
  });

  it("ignores a partial last line (the writer is mid-write)", async () => {
    expect(await backward(`${content}{"half":`, 5)).toEqual(lines.filter((l) => l !== "").reverse());
  });

  it("stops where the visitor says", async () => {
    expect(await backward(content, 4, "3")).toEqual(["fourth line", "3"]);
  });

  it("gives up after maxBytes", async () => {
    const path = join(dir, "cap.log");
    await writeFile(path, `${"x".repeat(100)}\n${"y".repeat(10)}\n`);
    const file = await open(path, "r");
    try {
      const seen: string[] = [];
      const result = await readLinesBackward(file, 112, (l) => seen.push(l.toString()) < 0, {
        blockBytes: 8,
        maxBytes: 16,
      });
      expect(seen).toEqual(["y".repeat(10)]);
      expect(result.stopped).toBe(false);
      expect(result.bytesRead).toBe(16);
    } finally {
      await file.close();
    }
  });
});

/** Counts records since the newest `open` record; a test reducer for the follower. */
const counter: LifecycleReducer<{ opened: string; count: number }> = {
  initial: () => ({ opened: "", count: 0 }),
  opensTurn: (r) => r.kind === "open",
  apply: (s, r) => (r.kind === "open" ? { opened: String(r.id), count: 0 } : { ...s, count: s.count + 1 }),
};

describe("LogFollower", () => {
  it("reads new growth forward, leaves unchanged logs alone, and rereads a rewritten log backward", async () => {
    const path = join(dir, "follow.jsonl");
    await writeFile(path, '{"kind":"open","id":1}\n{"kind":"x"}\nnot json\n{"kind":"open","id":2}\n{"kind":"x"}\n');
    const follower = new LogFollower(counter);
    const first = await follower.read(path);
    expect(first?.state).toEqual({ opened: "2", count: 1 });
    expect(first?.reread).toBe(true);
    expect((await follower.read(path))?.reread).toBe(false);
    await appendFile(path, '{"kind":"x"}\n{"kind":"x"');
    expect((await follower.read(path))?.state).toEqual({ opened: "2", count: 2 });
    await appendFile(path, "}\n");
    expect((await follower.read(path))?.state).toEqual({ opened: "2", count: 3 });
    await writeFile(path, '{"kind":"open","id":9}\n');
    expect((await follower.read(path))?.state).toEqual({ opened: "9", count: 0 });
    await rm(path);
    expect(await follower.read(path)).toBeUndefined();
  });
});
