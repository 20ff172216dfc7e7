import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { REPO_ROOT, runProcess } from "../support/servers.js";

const CHUNKS = join(REPO_ROOT, "dist/chunks");
const SOURCE = "services/common/package-root.ts";

/** The compiled chunk whose source map names `source` (a path relative to the repository). */
async function chunkOf(source: string): Promise<string> {
  for (const name of await readdir(CHUNKS)) {
    if (!name.endsWith(".js.map")) continue;
    const map: { sources: string[] } = JSON.parse(await readFile(join(CHUNKS, name), "utf8"));
    if (map.sources.includes(`../../${source}`)) return join(CHUNKS, name.slice(0, -".map".length));
  }
  throw new Error(`no chunk in dist/chunks comes from ${source}`);
}

describe("the compiled command's source maps", () => {
  it("lead a stack trace thrown in compiled code to the .ts file and line", async () => {
    const chunk = await chunkOf(SOURCE);
    // The line of packageRoot's "no staragent package.json above" error in the source.
    const line =
      (await readFile(join(REPO_ROOT, SOURCE), "utf8")).split("\n").findIndex((l) => l.includes("package.json above")) +
      1;
    expect(line).toBeGreaterThan(0);
    // What the command does at start (bin/staragent.ts), then an error inside a compiled chunk.
    const script = [
      "process.setSourceMapsEnabled(true);",
      `const { packageRoot } = await import(${JSON.stringify(pathToFileURL(chunk).href)});`,
      'try { packageRoot("/"); } catch (err) { console.log(err.stack); }',
    ].join("\n");
    const run = await runProcess(process.execPath, ["--input-type=module", "-e", script]);
    expect(run.stderr).toBe("");
    expect(run.stdout).toMatch(/^Error: no staragent package\.json above \//);
    expect(run.stdout).toContain(`at packageRoot (${join(REPO_ROOT, SOURCE)}:${line}:`);
  });
});
