#!/usr/bin/env node
// @ts-check
/**
 * What the dashboard's bundle is made of, per source file: bundles web/src/main.ts with esbuild
 * (minified, split at dynamic imports, as Vite's build is) and sums each input's `bytesInOutput` from
 * esbuild's metafile, packages counted by package. With `--against REV`, the same for the tree at git
 * revision REV (extracted to a temporary folder, using this checkout's node_modules), and the
 * difference per source, largest growth first: where a change made the bundle grow.
 *
 * The figures are minified bytes before compression, so they rank sources and show growth; the sizes as
 * sent (gzip, per chunk) are the benchmark's (docs/benchmarks.md, "Dashboard").
 *
 *   node scripts/bundle-sources.mjs [--against REV] [--top N]
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { build } from "esbuild";

const ROOT = resolve(import.meta.dirname, "..");
/** Rows printed when --top is not given. */
const DEFAULT_TOP = 40;

/**
 * Minified bytes per source of the dashboard in `root`: web/src and gen/ files by path, packages as
 * `npm:name`.
 * @param {string} root
 * @returns {Promise<Map<string, number>>}
 */
async function bytesPerSource(root) {
  const result = await build({
    entryPoints: [join(root, "web/src/main.ts")],
    absWorkingDir: root,
    tsconfig: join(root, "web/tsconfig.json"),
    bundle: true,
    minify: true,
    splitting: true,
    format: "esm",
    target: "es2022",
    outdir: join(root, ".tmp/bundle-sources"),
    write: false,
    metafile: true,
    logLevel: "error",
  });
  const bytes = new Map();
  for (const output of Object.values(result.metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      const pkg = input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
      const key = pkg ? `npm:${pkg[1]}` : input;
      bytes.set(key, (bytes.get(key) ?? 0) + bytesInOutput);
    }
  }
  return bytes;
}

/**
 * The dashboard's sources as they were at `rev`, in a temporary folder that uses this checkout's
 * node_modules.
 * @param {string} rev
 */
function treeAt(rev) {
  const dir = mkdtempSync(join(tmpdir(), "sa-bundle-sources-"));
  const archive = execFileSync("git", ["archive", rev, "web", "gen", "tsconfig.base.json"], {
    cwd: ROOT,
    maxBuffer: 256 * 1024 * 1024,
  });
  execFileSync("tar", ["-x", "-C", dir], { input: archive });
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  return dir;
}

/** @param {Map<string, number>} bytes */
function firstParty(bytes) {
  let n = 0;
  for (const [key, size] of bytes) if (!key.startsWith("npm:")) n += size;
  return n;
}

const { values } = parseArgs({ options: { against: { type: "string" }, top: { type: "string" } } });
const top = Number(values.top ?? DEFAULT_TOP);
const now = await bytesPerSource(ROOT);
if (values.against === undefined) {
  console.log(`first-party (web/src and gen/): ${firstParty(now)} bytes minified`);
  for (const [key, size] of [...now].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${String(size).padStart(8)}  ${key}`);
  }
} else {
  const dir = treeAt(values.against);
  try {
    const then = await bytesPerSource(dir);
    const [a, b] = [firstParty(then), firstParty(now)];
    console.log(`first-party (web/src and gen/): ${a} → ${b} bytes minified (${((b / a - 1) * 100).toFixed(1)} %)`);
    const rows = [...new Set([...then.keys(), ...now.keys()])]
      .map((key) => ({ key, before: then.get(key) ?? 0, after: now.get(key) ?? 0 }))
      .filter((r) => r.before !== r.after)
      .sort((x, y) => y.after - y.before - (x.after - x.before));
    console.log("  change    before     after  source");
    for (const r of rows.slice(0, top)) {
      const change = r.after - r.before;
      console.log(
        `${(change > 0 ? `+${change}` : String(change)).padStart(8)}  ${String(r.before).padStart(8)}  ${String(r.after).padStart(8)}  ${r.key}`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
