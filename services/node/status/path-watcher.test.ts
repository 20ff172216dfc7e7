import { appendFile, mkdir, mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { waitFor } from "../../../test/support/wait.js";
import { PathWatcher } from "./path-watcher.js";

describe("PathWatcher", () => {
  let dir: string;
  let watcher: PathWatcher | undefined;
  let changed: string[];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "sa-path-watcher-"));
    changed = [];
  });

  afterEach(async () => {
    watcher?.close();
    watcher = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  const start = () => {
    const w = new PathWatcher((path) => changed.push(path));
    watcher = w;
    return w;
  };

  it("reports a write to a watched file with the path it was given", async () => {
    const log = join(dir, "log.jsonl");
    await writeFile(log, "");
    const w = start();
    expect(await w.set([log])).toEqual([log]);
    await appendFile(log, "{}\n");
    await waitFor(() => changed.includes(log), "the append to be reported");
    expect(new Set(changed)).toEqual(new Set([log]));
  });

  it("watches a path that does not exist yet through its nearest existing folder", async () => {
    const future = join(dir, "sessions", "2026", "11", "29");
    const w = start();
    expect(await w.set([future])).toEqual([future]);
    await mkdir(join(dir, "sessions"));
    await waitFor(() => changed.includes(future), "the folder's creation to be reported");
  });

  it("re-arms a file replaced by a rename, and the new file's writes are reported", async () => {
    const state = join(dir, "state.json");
    await writeFile(state, "{}");
    const w = start();
    await w.set([state]);
    await writeFile(join(dir, "state.json.tmp"), '{"a":1}');
    await rename(join(dir, "state.json.tmp"), state);
    await waitFor(() => changed.includes(state), "the replacement to be reported");
    await waitFor(() => !w.paths.has(state), "the watch of the replaced file to be dropped");
    expect(await w.set([state])).toEqual([state]);
    changed = [];
    await appendFile(state, " ");
    await waitFor(() => changed.includes(state), "a write to the new file to be reported");
  });

  it("stops watching paths no longer asked for, and everything after close", async () => {
    const a = join(dir, "a");
    const b = join(dir, "b");
    await Promise.all([writeFile(a, ""), writeFile(b, "")]);
    const w = start();
    await w.set([a, b]);
    expect(w.paths).toEqual(new Set([a, b]));
    expect(await w.set([b])).toEqual([]);
    expect(w.paths).toEqual(new Set([b]));
    w.close();
    expect(w.paths).toEqual(new Set());
    expect(await w.set([a])).toEqual([]);
  });
});
