import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { exitOnSignals } from "../test/support/leftovers.js";

/**
 * `make bench`: runs every `bench/*.bench.ts` in name order (or those named on the command line) and
 * prints their figures. Each module exports `run(): Promise<void>`, prints its own table, and cleans
 * up what it started; stopped with Ctrl-C, the servers and private tmux servers it started are stopped
 * on the way out (test/support/leftovers.ts). Figures go into docs/benchmarks.md by hand, with this
 * command.
 */
exitOnSignals();
const only = process.argv.slice(2);
const dir = import.meta.dirname;
const files = (await readdir(dir))
  .filter((f) => f.endsWith(".bench.ts") && (only.length === 0 || only.some((o) => f.includes(o))))
  .sort();
if (files.length === 0) {
  console.error(`no benchmarks matched ${only.join(" ")}`);
  process.exit(1);
}
console.log(`StarAgent benchmarks · ${new Date().toISOString()} · node ${process.version}`);
for (const file of files) {
  console.log(`\n## ${file.replace(/\.bench\.ts$/, "")}`);
  const mod = (await import(pathToFileURL(join(dir, file)).href)) as { run: () => Promise<void> };
  await mod.run();
}
