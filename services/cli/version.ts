import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { packageRoot } from "../common/package-root.js";
import { CONTRACT_VERSION, STARAGENT_VERSION } from "../common/version.js";

/**
 * The line `staragent --version` prints: the version, the commit it was built from (written into
 * dist/build-info.json by `make build`) and the API contract, so a bug report or a mixed fleet of
 * Hub and Nodes can be told apart at a glance.
 */
export async function versionLine(): Promise<string> {
  return `staragent ${STARAGENT_VERSION} (commit ${await buildCommit()}, contract ${CONTRACT_VERSION})`;
}

/** The commit of this build; "source" when running the .ts files directly (`make dev`). */
async function buildCommit(): Promise<string> {
  if (!import.meta.url.endsWith(".js")) return "source";
  try {
    const info: unknown = JSON.parse(await readFile(join(packageRoot(), "dist/build-info.json"), "utf8"));
    if (typeof info === "object" && info !== null && "commit" in info && typeof info.commit === "string") {
      return info.commit;
    }
    return "unknown";
  } catch {
    return "unknown";
  }
}
