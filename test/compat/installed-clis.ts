import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Where `make compat` installs the pinned CLIs (test/compat/node_modules). */
export const COMPAT_ROOT = import.meta.dirname;
/** The Codex entry point (a node script that starts the native binary of the package). */
export const CODEX_BIN = join(COMPAT_ROOT, "node_modules/.bin/codex");
/** The opencode native binary (the postinstall links the variant this CPU runs). */
export const OPENCODE_BIN = join(COMPAT_ROOT, "node_modules/.bin/opencode");
/** The Claude Code native binary (the postinstall copies this platform's build over a stub). */
export const CLAUDE_BIN = join(COMPAT_ROOT, "node_modules/.bin/claude");
/** The GitHub Copilot CLI: npm's loader, which starts the native build of `@github/copilot-linux-x64`. */
export const COPILOT_BIN = join(COMPAT_ROOT, "node_modules/.bin/copilot");
/** How long `<cli> --version` may take: a first run of a large native binary is read from disk. */
const VERSION_TIMEOUT_MS = 30_000;

/**
 * Fails, saying why, when the CLI under test is missing or does not run (e.g. npm could not install
 * this platform's native build and left the package's stub): a CLI that cannot run is never counted
 * as passed. `version` is the pinned version its `--version` must print.
 */
export function requireInstalledCli(bin: string, version: string): void {
  if (!existsSync(bin)) {
    throw new Error(`${bin} is not installed: run 'make compat', which installs the pinned CLIs into test/compat`);
  }
  // The CLIs write into HOME even for --version: a throwaway one.
  const home = mkdtempSync(join(tmpdir(), "sa-compat-version-"));
  let out: string;
  try {
    // Most print their version on stdout; pi prints it on stderr.
    const run = spawnSync(bin, ["--version"], {
      encoding: "utf8",
      timeout: VERSION_TIMEOUT_MS,
      env: { PATH: process.env.PATH, HOME: home, DISABLE_AUTOUPDATER: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    if (run.error || run.status !== 0) {
      throw new Error(run.error?.message ?? `exit status ${run.status}: ${run.stderr}`);
    }
    out = `${run.stdout}${run.stderr}`;
  } catch (err) {
    throw new Error(
      `${bin} --version failed, so the CLI was not tested (is its native build installed?): ${(err as Error).message}`,
    );
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
  if (!out.includes(version)) {
    throw new Error(
      `${bin} --version printed ${JSON.stringify(out.trim())}, not the pinned ${version}: run 'make compat'`,
    );
  }
}
/** Gemini CLI's entry point (a node script, `bundle/gemini.js`). */
export const GEMINI_BIN = join(COMPAT_ROOT, "node_modules/.bin/gemini");
/** Qwen Code's entry point (a node script). */
export const QWEN_BIN = join(COMPAT_ROOT, "node_modules/.bin/qwen");
/** pi's entry point (a node script, `@mariozechner/pi-coding-agent/dist/cli.js`). */
export const PI_BIN = join(COMPAT_ROOT, "node_modules/.bin/pi");
/** The pi package, whose shipped examples the compat run uses (its permission gate extension). */
export const PI_PACKAGE = join(COMPAT_ROOT, "node_modules/@mariozechner/pi-coding-agent");
/** Kilo CLI: npm's loader (a node script), which starts the native build `bin/.kilo` beside it. */
export const KILO_BIN = join(COMPAT_ROOT, "node_modules/.bin/kilo");
/** Factory droid's binary (the package's postinstall puts the platform package's build at `bin/droid`). */
export const DROID_BIN = join(COMPAT_ROOT, "node_modules/.bin/droid");
