import { existsSync } from "node:fs";
import { join } from "node:path";

/** Where `npm ci` in test/compat puts the pinned CLIs. */
export const COMPAT_ROOT = import.meta.dirname;
/** The Codex entry point (a node script that starts the native binary of the package). */
export const CODEX_BIN = join(COMPAT_ROOT, "node_modules/.bin/codex");
/** The opencode native binary (the postinstall links the variant this CPU runs). */
export const OPENCODE_BIN = join(COMPAT_ROOT, "node_modules/.bin/opencode");

/**
 * Fails with a message that says how to install when the pinned CLIs are missing, so a run without
 * them never looks like a pass.
 */
export function requireInstalledClis(): void {
  const missing = [CODEX_BIN, OPENCODE_BIN].filter((bin) => !existsSync(bin));
  if (missing.length > 0) {
    throw new Error(
      `the pinned CLIs are not installed (${missing.join(", ")}): run 'make compat', which runs npm ci in test/compat`,
    );
  }
}
