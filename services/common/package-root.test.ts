import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../test/support/servers.js";
import { eachTempDir } from "../../test/support/temp-dir.js";
import { packageRoot } from "./package-root.js";

describe("packageRoot", () => {
  let dir: string;
  eachTempDir("sa-pkgroot-", (made) => (dir = made));

  it("is the repository when running from source", () => {
    expect(packageRoot()).toBe(REPO_ROOT);
  });

  it("skips other packages' package.json on the way up (an installed package's compiled tree)", async () => {
    const pkg = join(dir, "lib/node_modules/staragent");
    const compiled = join(pkg, "dist/services/hub");
    await mkdir(compiled, { recursive: true });
    await writeFile(join(dir, "package.json"), JSON.stringify({ name: "someone-else" }));
    await writeFile(join(pkg, "dist/package.json"), "not json");
    await writeFile(join(pkg, "package.json"), JSON.stringify({ name: "staragent", version: "0.1.0" }));
    expect(packageRoot(compiled)).toBe(pkg);
  });

  it("says so when no StarAgent package is above", () => {
    expect(() => packageRoot(dir)).toThrow(/no staragent package.json above/);
  });
});
