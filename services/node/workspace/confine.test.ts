import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { outcomeOf } from "../../../test/support/codes.js";
import { checkRelativePath, confine, looksSecret } from "./confine.js";

describe("looksSecret", () => {
  it("knows the conventional secret files and folders, and leaves public keys and look-alikes alone", () => {
    for (const p of [
      ".env",
      ".env.production",
      "a/cert.pem",
      "server.key",
      "id_rsa",
      "id_ed25519",
      ".netrc",
      ".ssh/config",
      "x/.aws/credentials",
      ".gnupg/pubring.kbx",
    ]) {
      expect([p, looksSecret(p)]).toEqual([p, true]);
    }
    for (const p of ["id_rsa.pub", "environment.ts", "keys.ts", "src/key.tsx", "README.md", "ssh/notes"]) {
      expect([p, looksSecret(p)]).toEqual([p, false]);
    }
  });
});

describe("confine", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), "sa-confine-")));
    await mkdir(join(dir, "root", "sub"), { recursive: true });
    await writeFile(join(dir, "root", "sub", "a.txt"), "a");
    await symlink("sub/a.txt", join(dir, "root", "inside-link"));
    await symlink(dir, join(dir, "root", "up"));
    await writeFile(join(dir, "outside.txt"), "out");
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("accepts a path through a link that leads back inside", async () => {
    expect((await confine(join(dir, "root"), "up/root/sub/a.txt", { refuseSecrets: true })).relative).toBe(
      "up/root/sub/a.txt",
    );
  });

  it("accepts paths inside the root, symlinks inside it included, and names the root with '' and '.'", async () => {
    expect(checkRelativePath("./sub//a.txt")).toEqual(["sub", "a.txt"]);
    expect((await confine(join(dir, "root"), "inside-link", { refuseSecrets: true })).real).toBe(
      join(dir, "root", "sub", "a.txt"),
    );
    expect((await confine(join(dir, "root"), ".", { refuseSecrets: true })).relative).toBe("");
  });

  it("refuses escapes before and after resolving, and a missing file's folder outside too", async () => {
    const root = join(dir, "root");
    for (const p of ["../x", "sub/../../x", "/etc", "a\0b", "x".repeat(4097), "up/outside.txt", "up/gone.txt"]) {
      expect([p.slice(0, 20), await outcomeOf(confine(root, p, { refuseSecrets: true, mayBeMissing: true }))]).toEqual([
        p.slice(0, 20),
        "PermissionDenied",
      ]);
    }
    expect(await outcomeOf(confine(root, "sub/gone.txt", { refuseSecrets: true }))).toBe("NotFound");
    expect(await outcomeOf(confine(root, "sub/gone.txt", { refuseSecrets: true, mayBeMissing: true }))).toBe("OK");
  });
});
