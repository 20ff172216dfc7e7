import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** The `name` in the package.json that marks StarAgent's own folder (the repository or the installed package). */
const PACKAGE_NAME = "staragent";

/**
 * The folder holding StarAgent's package.json: the repository when running from it, the installed
 * package otherwise. Source files (services/…) and compiled ones (dist/services/…) sit at different
 * depths below it, so paths to what ships beside the code (the built dashboard, dist/build-info.json)
 * start from here rather than from a fixed `../..`. Throws when no such folder is above `from`.
 */
export function packageRoot(from: string = import.meta.dirname): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (isStarAgentPackage(join(dir, "package.json"))) return dir;
    if (dirname(dir) === dir) throw new Error(`no ${PACKAGE_NAME} package.json above ${from}`);
  }
}

function isStarAgentPackage(file: string): boolean {
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, "utf8"));
    return typeof parsed === "object" && parsed !== null && "name" in parsed && parsed.name === PACKAGE_NAME;
  } catch {
    return false;
  }
}
