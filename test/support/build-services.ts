import { execFileSync } from "node:child_process";
import { join, resolve } from "node:path";

/**
 * Vitest global setup: compiles services/ and gen/ into dist/ (`make build`, about 0.3 s) before any
 * test runs, because tests spawn the compiled `staragent` command. Without it, a test run right after
 * an edit would exercise the previous build.
 */
export default function setup(): void {
  const root = resolve(import.meta.dirname, "../..");
  execFileSync(process.execPath, [join(root, "scripts/build.mjs")], {
    cwd: root,
    stdio: ["ignore", "ignore", "inherit"],
  });
}
