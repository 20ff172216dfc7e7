// Records every module a node process loads, for tests that check what a command imports. Used as
// `node --import test/support/import-trace.mjs …` with STARAGENT_IMPORT_TRACE=<file>: every ES module
// the process resolves (through a module.register hook) and, when it exits, every CommonJS module in
// the require cache (what ES modules import from packages such as node-pty, and what those require in
// turn), one file URL or path a line.
import { appendFileSync } from "node:fs";
import { createRequire, register } from "node:module";

const file = process.env.STARAGENT_IMPORT_TRACE;
if (!file) throw new Error("import-trace.mjs needs STARAGENT_IMPORT_TRACE=<file>");
register("./import-trace-hooks.mjs", import.meta.url, { data: { file } });
const require = createRequire(import.meta.url);
process.on("exit", () => {
  appendFileSync(
    file,
    Object.keys(require.cache)
      .map((p) => `${p}\n`)
      .join(""),
  );
});
