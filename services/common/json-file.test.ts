import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, stat, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import * as v from "valibot";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { JsonFile, schemaValidator } from "./json-file.js";
import { createLogger } from "./log.js";

const CounterSchema = v.object({ n: v.number() });
type Counter = v.InferOutput<typeof CounterSchema>;
const validateCounter = schemaValidator(CounterSchema, "counter.json");

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

  it.each([
    ["a directory", async (path: string) => mkdir(path)],
    ["a FIFO (which a plain read would wait on forever)", async (path: string) => mkfifo(path)],
    ["a 600 MB file", async (path: string) => writeFile(path, "").then(() => truncate(path, 600 * 1024 * 1024))],
  ])("keeps %s in its place aside, logs it once, and starts empty", async (_what, make) => {
    await mkdir(join(dir, "state"));
    await make(file.path);
    expect(await file.read()).toEqual({ n: 0 });
    expect(await file.read()).toEqual({ n: 0 });
    const names = await readdir(join(dir, "state"));
    expect(names.filter((n) => n.startsWith("counter.json.corrupt-"))).toHaveLength(1);
    expect(names).not.toContain("counter.json");
    expect(lines.filter((l) => l.includes("kept aside"))).toHaveLength(1);
    await file.update((c) => ({ n: c.n + 2 }));
    expect(await file.read()).toEqual({ n: 2 });
  });

  it("keeps a file over its size limit aside without reading it", async () => {
    const small = new JsonFile(
      join(dir, "small.json"),
      validateCounter,
      () => ({ n: 0 }),
      createLogger("t", "error"),
      0o600,
      16,
    );
    await writeFile(small.path, `{"n": 1, "pad": "${"x".repeat(32)}"}`);
    expect(await small.read()).toEqual({ n: 0 });
    expect((await readdir(dir)).filter((n) => n.startsWith("small.json.corrupt-"))).toHaveLength(1);
  });

  it("leaves a bad file it cannot move in place: logged once, not read again until it changes, never overwritten", async () => {
    // A name so long that adding `.corrupt-<time>` exceeds the file system's limit: it cannot be renamed.
    const path = join(dir, `${"n".repeat(240)}.json`);
    const stuck = new JsonFile(
      path,
      validateCounter,
      () => ({ n: 0 }),
      createLogger("store", "debug", (l) => lines.push(l)),
    );
    await writeFile(path, "{ corrupt");
    for (let i = 0; i < 5; i++) expect(await stuck.read()).toEqual({ n: 0 });
    expect(lines.filter((l) => l.includes("could not be kept aside"))).toHaveLength(1);
    const failure = await stuck
      .update((c) => ({ n: c.n + 1 }))
      .then(
        () => undefined,
        (err: unknown) => ConnectError.from(err),
      );
    expect(failure?.code).toBe(Code.FailedPrecondition);
    expect(failure?.rawMessage).toMatch(/is not valid .* could not be moved aside .* will not overwrite it/);
    expect(await readFile(path, "utf8")).toBe("{ corrupt");
    // Repaired by hand: read again at once.
    await writeFile(path, '{"n": 4}');
    expect(await stuck.read()).toEqual({ n: 4 });
  });

  it("answers FAILED_PRECONDITION naming the file when it cannot be written", async () => {
    // No file yet, and a name so long that its temporary sibling cannot be created.
    const unwritable = new JsonFile(
      join(dir, `${"w".repeat(250)}.json`),
      validateCounter,
      () => ({ n: 0 }),
      createLogger("t", "error"),
    );
    const failure = await unwritable
      .update((c) => ({ n: c.n + 1 }))
      .then(
        () => undefined,
        (err: unknown) => ConnectError.from(err),
      );
    expect(failure?.code).toBe(Code.FailedPrecondition);
    expect(failure?.rawMessage).toMatch(
      /^cannot write .*w\.json \(ENAMETOOLONG.*\); StarAgent keeps its state there: make .* writable$/,
    );
  });
});

/** Makes a named pipe (Node has no mkfifo of its own). */
function mkfifo(path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile("mkfifo", [path], (err) => (err ? reject(err) : resolve()));
  });
}
