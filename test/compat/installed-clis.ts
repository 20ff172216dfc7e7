import { execFileSync } from "node:child_process";
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
    out = execFileSync(bin, ["--version"], {
      encoding: "utf8",
      timeout: VERSION_TIMEOUT_MS,
      env: { PATH: process.env.PATH, HOME: home, DISABLE_AUTOUPDATER: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
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
