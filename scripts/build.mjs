#!/usr/bin/env node
// @ts-check
/**
 * `make build`: compiles the TypeScript into dist/ with source maps, so the `staragent` command, the Hub
 * and the Node start without a TypeScript loader and stack traces still name the .ts lines.
 *
 * - dist/staragent.js and dist/chunks/: the command, bundled from services/bin/staragent.ts with
 *   everything it imports (services/, gen/, and the pure-JavaScript packages: protobuf-es and Connect).
 *   Each `import()` of a command in services/cli/main.ts (and of the servers in services/bin/staragent.ts)
 *   becomes its own chunk, so `staragent ls` loads the client's chunks and never the Hub's, the Node's
 *   or the native modules. One bundle instead of one file per module because Node spends most of a short
 *   command's start resolving and compiling modules: ~150 of them for `ls`, about half its wall time
 *   (docs/benchmarks.md, "Startup").
 * - dist/gen/: the generated code, one JavaScript file per .ts, for tools that integrate with the API.
 *
 * No file lists: the bundle follows imports from the entry point, and gen/ is walked, so files added or
 * moved under services/ and gen/ need no change here; outputs a build no longer makes are removed.
 * node-pty, better-sqlite3 (native addons) and web-push (CommonJS) stay outside the bundle, installed as
 * dependencies.
 *
 * esbuild rather than tsc: about 0.3 s for everything against tsc's 2 to 6 s, so every test run can
 * rebuild first and never spawn stale code. Type-checking stays in `make lint` (tsc), and
 * `verbatimModuleSyntax` in tsconfig keeps the code transpilable one file at a time.
 *
 * Only files whose bytes changed are rewritten (each to a temporary file, then renamed), so a rebuild
 * never shows a half-written module to a Hub or Node that is running from dist/ at that moment.
 */
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";

/** The repository root. */
export const ROOT = resolve(import.meta.dirname, "..");
/** Where every output goes. */
export const DIST = join(ROOT, "dist");
/** The command's source; its bundle is dist/staragent.js (package.json's `bin`). */
const ENTRY = join(ROOT, "services/bin/staragent.ts");
/**
 * Packages left to Node's resolver at run time: native addons, which a bundle cannot hold, and
 * web-push, CommonJS that `require`s Node's built-ins (an ESM bundle cannot).
 */
const EXTERNAL = ["node-pty", "better-sqlite3", "web-push"];
/** The generated code, compiled one file each into dist/gen/. */
const GEN = join(ROOT, "gen");
/** What `staragent --version` reports besides the version: the commit. */
const BUILD_INFO = join(DIST, "build-info.json");
/** Options both builds share. */
const COMMON = /** @type {const} */ ({
  format: "esm",
  platform: "node",
  target: "node20",
  sourcemap: "linked",
  // Stack traces need only the mappings; the sources stay in the repository.
  sourcesContent: false,
  tsconfig: join(ROOT, "tsconfig.json"),
  write: false,
  logLevel: "warning",
});

/**
 * The .ts files under `dir` (absolute paths), tests and declaration files aside.
 * @param {string} dir
 * @returns {string[]}
 */
function sources(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts") && !e.name.endsWith(".test.ts") && !e.name.endsWith(".d.ts"))
    .map((e) => join(e.parentPath, e.name));
}

/** The commit the tree was built from (with `-dirty` when it has uncommitted changes), or "unknown". */
function commit() {
  try {
    return execFileSync("git", ["describe", "--always", "--dirty", "--abbrev=12", "--exclude=*"], {
      cwd: ROOT,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    return "unknown";
  }
}

/**
 * Writes `contents` to `file` unless it already holds exactly that; returns whether it wrote.
 * @param {string} file
 * @param {Buffer} contents
 */
function writeIfChanged(file, contents) {
  if (existsSync(file) && readFileSync(file).equals(contents)) return false;
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, contents);
  renameSync(tmp, file);
  return true;
}

/**
 * Removes every file in dist/ this build did not make (a chunk whose hash changed, a file deleted from gen/).
 * @param {Set<string>} expected the files this build wrote or kept
 */
function removeOrphans(expected) {
  let removed = 0;
  for (const e of readdirSync(DIST, { recursive: true, withFileTypes: true })) {
    const file = join(e.parentPath, e.name);
    if (e.isFile() && !expected.has(file)) {
      rmSync(file);
      removed++;
    }
  }
  return removed;
}

/**
 * Builds dist/: the bundled command and the compiled generated code. Returns how many files it wrote
 * and removed.
 * @returns {Promise<{ written: number; removed: number }>}
 */
export async function buildAll() {
  const [app, gen] = await Promise.all([
    build({
      ...COMMON,
      entryPoints: [ENTRY],
      outdir: DIST,
      entryNames: "[name]",
      chunkNames: "chunks/[name]-[hash]",
      bundle: true,
      splitting: true,
      external: EXTERNAL,
      // Less for Node to read and compile at each start (about 8 % of `staragent ls`); names are kept,
      // and the source maps lead back to the .ts lines.
      minifyWhitespace: true,
      minifySyntax: true,
    }),
    build({ ...COMMON, entryPoints: sources(GEN), outdir: join(DIST, "gen"), outbase: GEN, bundle: false }),
  ]);
  let written = 0;
  /** @type {Set<string>} */
  const expected = new Set([BUILD_INFO]);
  for (const file of [...app.outputFiles, ...gen.outputFiles]) {
    expected.add(file.path);
    if (writeIfChanged(file.path, Buffer.from(file.contents))) written++;
  }
  chmodSync(join(DIST, "staragent.js"), 0o755);
  writeIfChanged(BUILD_INFO, Buffer.from(`${JSON.stringify({ commit: commit() })}\n`));
  return { written, removed: removeOrphans(expected) };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const started = performance.now();
  const { written, removed } = await buildAll();
  const ms = (performance.now() - started).toFixed(0);
  console.log(`built ${relative(process.cwd(), DIST) || "."}: ${written} files written, ${removed} removed, ${ms} ms`);
}
