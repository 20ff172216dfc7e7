import { createECDH } from "node:crypto";
import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { eachTempDir } from "../../../test/support/temp-dir.js";
import { createLogger } from "../../common/log.js";
import { loadOrCreateVapidKeys } from "./vapid-keys.js";

describe("loadOrCreateVapidKeys", () => {
  let home: string;
  const log = createLogger("t", "error");
  eachTempDir("sa-vapid-", (made) => (home = made));

  it("generates a P-256 pair once into a 0600 file and returns the same keys after a restart", async () => {
    const first = await loadOrCreateVapidKeys(home, log);
    const info = await stat(join(home, "vapid.json"));
    expect(info.mode & 0o777).toBe(0o600);
    // The public key is the private key's point: the pair is real, not two random strings.
    const ecdh = createECDH("prime256v1");
    ecdh.setPrivateKey(Buffer.from(first.privateKey, "base64url"));
    expect(ecdh.getPublicKey().toString("base64url")).toBe(first.publicKey);
    const again = await loadOrCreateVapidKeys(home, log);
    expect(again).toEqual(first);
  });

  it("keeps a corrupt key file aside (never deleted) and generates new keys", async () => {
    await writeFile(join(home, "vapid.json"), '{"publicKey":"short","privateKey":"x"}');
    const keys = await loadOrCreateVapidKeys(home, log);
    expect(Buffer.from(keys.publicKey, "base64url")).toHaveLength(65);
    const aside = (await readdir(home)).filter((f) => f.startsWith("vapid.json.corrupt-"));
    expect(aside).toHaveLength(1);
    expect(await readFile(join(home, aside[0] ?? ""), "utf8")).toContain("short");
  });
});
