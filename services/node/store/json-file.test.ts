import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLogger } from "../../common/log.js";
import { expectObject, JsonFile } from "./json-file.js";

interface Counter {
  readonly n: number;
}

function validateCounter(value: unknown): Counter {
  const obj = expectObject(value, "counter.json");
  if (typeof obj.n !== "number") throw new Error("counter.json: 'n' must be a number");
  return { n: obj.n };
}

describe("JsonFile", () => {
  let dir: string;
  let lines: string[];
  let file: JsonFile<Counter>;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "sa-json-"));
    lines = [];
    const log = createLogger("store", "debug", (l) => lines.push(l));
    file = new JsonFile(join(dir, "state", "counter.json"), validateCounter, () => ({ n: 0 }), log);
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("reads a missing file as the empty value", async () => {
    expect(await file.read()).toEqual({ n: 0 });
  });

  it("writes atomically with mode 0600 and leaves no temporary file", async () => {
    await file.write({ n: 7 });
    expect(JSON.parse(await readFile(file.path, "utf8"))).toEqual({ n: 7 });
    expect((await stat(file.path)).mode & 0o777).toBe(0o600);
    expect(await readdir(join(dir, "state"))).toEqual(["counter.json"]);
    expect(await file.read()).toEqual({ n: 7 });
  });

  it("serialises concurrent updates so none is lost", async () => {
    await Promise.all(Array.from({ length: 20 }, () => file.update((c) => ({ n: c.n + 1 }))));
    expect(await file.read()).toEqual({ n: 20 });
  });

  it.each([
    ["not JSON", "{ n: 1"],
    ["the wrong shape", '{"n": "one"}'],
    ["an array", "[1]"],
  ])("keeps a file holding %s aside as *.corrupt-<time>, logs it, and starts empty", async (_what, content) => {
    await file.write({ n: 1 });
    await writeFile(file.path, content);
    expect(await file.read()).toEqual({ n: 0 });
    const names = await readdir(join(dir, "state"));
    const aside = names.filter((n) => /^counter\.json\.corrupt-\d{4}-\d\d-\d\dT[\d-]+Z$/.test(n));
    expect(aside).toHaveLength(1);
    expect(names).not.toContain("counter.json");
    expect(await readFile(join(dir, "state", aside[0] ?? ""), "utf8")).toBe(content);
    expect(lines.some((l) => l.includes("WARN") && l.includes("kept aside") && l.includes(aside[0] ?? "?"))).toBe(true);
    await file.update((c) => ({ n: c.n + 5 }));
    expect(await file.read()).toEqual({ n: 5 });
  });

  it("lets concurrent readers of a corrupt file all get the empty value, keeping it aside once", async () => {
    await file.write({ n: 1 });
    await writeFile(file.path, "{ corrupt");
    const reads = await Promise.all(Array.from({ length: 5 }, () => file.read()));
    expect(reads).toEqual(Array.from({ length: 5 }, () => ({ n: 0 })));
    const aside = (await readdir(join(dir, "state"))).filter((n) => n.includes(".corrupt-"));
    expect(aside).toHaveLength(1);
  });

  it("keeps one update's failure from blocking the next", async () => {
    await expect(
      file.update(() => {
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(await file.update((c) => ({ n: c.n + 1 }))).toEqual({ n: 1 });
  });
});
