#!/usr/bin/env node
// @ts-check
/**
 * `make lint`'s dependency rules (DESIGN.md §2): imports point down only.
 *
 *   web     → gen, its own files, npm packages
 *   cli     → gen, common
 *   common  → gen (neither hub nor node)
 *   node    → gen, common; never hub
 *   hub     → gen, common, and the Node's entry point (services/node/index.ts) only
 *   bin     → anything in services/: the `staragent` command's composition root, which picks the CLI,
 *             the Hub or the Node
 *   nothing under services/ → test/, except the tests themselves (`*.test.ts` sit next to the code they
 *   test and use the shared test support; test-only helpers live under test/)
 *
 * Every static `import`, `export … from` and `import("…")` with a literal specifier counts, `import type`
 * included: a type is a dependency too. Relative specifiers are resolved against the importing file;
 * `node:` modules and npm packages are allowed everywhere. Prints each forbidden edge as
 * `file:line: imports 'specifier' (area → area): rule` and exits 1 when there is any.
 *
 * Usage: node scripts/check-imports.mjs [ROOT]   (ROOT defaults to the repository; tests pass a fixture tree)
 *
 * The parsing is TypeScript's own `preProcessFile` (typescript is already a pinned dev dependency), so
 * comments and strings that look like imports are not counted.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";
import ts from "typescript";

/** The folders whose files are checked, relative to the root. */
const CHECKED = ["services", "web"];
/** Folders never walked (installed packages, build outputs). */
const SKIPPED = new Set(["node_modules", "dist", "fixtures"]);
/** Source files the rules apply to. */
const SOURCE = /\.(?:ts|mts|cts|js|mjs|cjs)$/;
/** The only file of the Node the Hub may import. */
const NODE_ENTRY = "services/node/index.ts";

/**
 * The area a repository-relative path belongs to, or undefined outside every area.
 * @param {string} path posix-style, relative to the root
 * @returns {string | undefined}
 */
export function areaOf(path) {
  if (path === NODE_ENTRY) return "node-entry";
  const [top, second] = path.split("/");
  if (top === "web" || top === "gen" || top === "test") return top;
  if (top === "services" && second !== undefined && path.includes("/", "services/".length)) return second;
  return undefined;
}

/**
 * What each area may import besides its own files, npm packages and `node:` modules, with the rule as
 * printed for a forbidden edge.
 * @type {Record<string, { allowed: string[]; rule: string }>}
 */
const RULES = {
  web: { allowed: ["gen"], rule: "web imports only gen/ (and its own files and npm packages)" },
  cli: { allowed: ["gen", "common"], rule: "cli imports only gen/ and services/common/" },
  common: { allowed: ["gen"], rule: "common imports only gen/ (neither hub nor node)" },
  node: { allowed: ["gen", "common", "node-entry"], rule: "node imports only gen/ and services/common/, never hub" },
  hub: {
    allowed: ["gen", "common", "node-entry"],
    rule: `hub imports the Node only through its entry point (${NODE_ENTRY}), and gen/ and services/common/`,
  },
  bin: {
    allowed: ["gen", "common", "cli", "hub", "node", "node-entry"],
    rule: "bin (the command's entry) imports only services/ and gen/",
  },
};

/** The rule for a services file that imports test/. */
const TEST_RULE = "nothing under services/ imports test/ except *.test.ts files (test-only code lives under test/)";

/**
 * The files to check under `root`, repository-relative with `/` separators.
 * @param {string} root
 * @returns {string[]}
 */
function filesUnder(root) {
  /** @type {string[]} */
  const out = [];
  /** @param {string} dir */
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (SKIPPED.has(e.name)) continue;
      const full = join(dir, e.name);
      if (e.isDirectory()) walk(full);
      else if (e.isFile() && SOURCE.test(e.name) && !e.name.endsWith(".d.ts")) out.push(full);
    }
  };
  for (const top of CHECKED) if (existsSync(join(root, top))) walk(join(root, top));
  return out.map((f) => relative(root, f).split(sep).join("/")).sort();
}

/**
 * One forbidden import.
 * @typedef {{ file: string; line: number; specifier: string; from: string; to: string; rule: string }} Violation
 */

/**
 * Every forbidden import in the tree at `root`.
 * @param {string} root
 * @returns {Violation[]}
 */
export function checkImports(root) {
  /** @type {Violation[]} */
  const violations = [];
  for (const file of filesUnder(root)) {
    const from = areaOf(file);
    if (from === undefined || from === "test" || from === "gen") continue;
    const isTest = /\.test\.[cm]?[jt]s$/.test(file);
    const source = readFileSync(join(root, file), "utf8");
    for (const imported of ts.preProcessFile(source, true, true).importedFiles) {
      const specifier = imported.fileName;
      // Packages and node: built-ins are allowed everywhere; only paths inside the tree have a direction.
      if (!specifier.startsWith(".") && !specifier.startsWith("/")) continue;
      const target = relative(root, resolve(root, dirname(file), specifier))
        .split(sep)
        .join("/");
      // A .js specifier names the .ts file beside it (NodeNext); the area is the same either way, except
      // for the Node's entry point, which must be recognised by its source name.
      const to = areaOf(target.replace(/\.js$/, ".ts"));
      if (to === undefined) {
        if (target.startsWith("..")) {
          violations.push({
            ...edge(file, source, imported, from, "outside"),
            rule: "imports stay inside the repository",
          });
        }
        continue;
      }
      const own = to === from || (from === "node" && to === "node-entry");
      if (to === "test") {
        if (!isTest) violations.push({ ...edge(file, source, imported, from, to), rule: TEST_RULE });
        continue;
      }
      const rule = RULES[from];
      if (own || rule === undefined || rule.allowed.includes(to)) continue;
      violations.push({ ...edge(file, source, imported, from, to), rule: rule.rule });
    }
  }
  return violations;
}

/**
 * The location part of a violation.
 * @param {string} file
 * @param {string} source
 * @param {{ fileName: string; pos: number }} imported
 * @param {string} from
 * @param {string} to
 */
function edge(file, source, imported, from, to) {
  const line = source.slice(0, imported.pos).split("\n").length;
  return { file, line, specifier: imported.fileName, from, to };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const root = resolve(process.argv[2] ?? join(import.meta.dirname, ".."));
  const violations = checkImports(root);
  for (const v of violations) {
    console.error(`${v.file}:${v.line}: imports '${v.specifier}' (${v.from} → ${v.to}): ${v.rule}`);
  }
  if (violations.length > 0) {
    console.error(`${violations.length} import(s) against the dependency rules (DESIGN.md §2)`);
    process.exitCode = 1;
  }
}
