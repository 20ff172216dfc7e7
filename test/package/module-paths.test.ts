import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/servers.js";

/**
 * The files allowed to look at their own location: packageRoot (which walks up to package.json from
 * wherever the code runs) and the version line (which tells source from compiled code).
 */
const ALLOWED = new Set(["services/common/package-root.ts", "services/cli/version.ts"]);

describe("code under services/ runs bundled", () => {
  it("finds files through packageRoot(), never relative to its own module (dist/chunks/ in the bundle)", async () => {
    const offenders: string[] = [];
    for (const e of await readdir(join(REPO_ROOT, "services"), { recursive: true, withFileTypes: true })) {
      if (!e.isFile() || !e.name.endsWith(".ts") || e.name.endsWith(".test.ts")) continue;
      const file = relative(REPO_ROOT, join(e.parentPath, e.name));
      if (ALLOWED.has(file)) continue;
      const text = await readFile(join(REPO_ROOT, file), "utf8");
      for (const [i, line] of text.split("\n").entries()) {
        if (/import\.meta\.(dirname|filename|url)|__dirname|__filename/.test(line)) offenders.push(`${file}:${i + 1}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
