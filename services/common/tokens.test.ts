import { readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { eachTempDir } from "../../test/support/temp-dir.js";
import { generateToken, loadOrCreateToken, secretLabel, secretsEqual } from "./tokens.js";

describe("tokens", () => {
  let dir: string;
  eachTempDir("sa-tokens-", (made) => (dir = made));

  it("compares secrets exactly", () => {
    expect(secretsEqual("abc", "abc")).toBe(true);
    expect(secretsEqual("abc", "abd")).toBe(false);
    expect(secretsEqual("abc", "abcd")).toBe(false);
    expect(secretsEqual("", "abc")).toBe(false);
  });

  it("labels a secret without revealing it", () => {
    const token = generateToken();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(secretLabel(token)).toMatch(/^[0-9a-f]{12}$/);
    expect(secretLabel(token)).not.toBe(secretLabel(generateToken()));
    expect(token).not.toContain(secretLabel(token));
  });

  it("generates a token file with mode 0600 in a new folder, then reuses it", async () => {
    const path = join(dir, "home", "auth_token");
    const first = await loadOrCreateToken(path);
    expect(first.created).toBe(true);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, "home"))).mode & 0o777).toBe(0o700);
    expect((await readFile(path, "utf8")).trim()).toBe(first.token);
    const second = await loadOrCreateToken(path);
    expect(second).toEqual({ token: first.token, created: false });
  });

  it("refuses a token file holding a short token rather than replacing it", async () => {
    const path = join(dir, "auth_token");
    await writeFile(path, "short\n");
    await expect(loadOrCreateToken(path)).rejects.toThrow(
      /^token file .*auth_token holds a token of 5 characters; tokens need at least 16 \(remove it/,
    );
    expect(await readFile(path, "utf8")).toBe("short\n");
  });

  it("replaces an empty token file", async () => {
    const path = join(dir, "auth_token");
    await writeFile(path, "\n");
    const result = await loadOrCreateToken(path);
    expect(result.created).toBe(true);
    expect((await readFile(path, "utf8")).trim()).toBe(result.token);
  });
});
