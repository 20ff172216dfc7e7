import { join } from "node:path";
import * as v from "valibot";
import webPush from "web-push";
import { JsonFile, schemaValidator } from "../../common/json-file.js";
import type { Logger } from "../../common/log.js";

/** The Hub's VAPID key pair (RFC 8292), base64url: what signs every push request it sends. */
export interface VapidKeys {
  readonly publicKey: string;
  readonly privateKey: string;
}

/** An uncompressed P-256 public key is 65 bytes; the private scalar 32. */
const PUBLIC_KEY_BYTES = 65;
const PRIVATE_KEY_BYTES = 32;

/**
 * Loads the Hub's VAPID keys from `$STARAGENT_HOME/vapid.json` (mode 0600: the private key signs
 * pushes), generating them once when the file is missing. Keys must stay the same across restarts:
 * every browser subscription is bound to the public key it was made with.
 */
export async function loadOrCreateVapidKeys(home: string, log: Logger): Promise<VapidKeys> {
  const file = new JsonFile<VapidKeys | null>(join(home, "vapid.json"), validateVapidKeys, () => null, log);
  const existing = await file.read();
  if (existing) return existing;
  const stored = await file.update((current) => current ?? webPush.generateVAPIDKeys());
  if (!stored) throw new Error("vapid.json: keys were not stored");
  log.info("generated the Hub's VAPID keys", { file: file.path });
  return stored;
}

/** A base64url key of exactly `bytes` bytes. */
const keyOf = (bytes: number, name: string) =>
  v.pipe(
    v.string(),
    v.check((k) => Buffer.from(k, "base64url").length === bytes, `${name} must be ${bytes} bytes, base64url`),
  );

/** `vapid.json`: the key pair, each key checked for its length. */
const VapidKeysSchema = v.object({
  publicKey: keyOf(PUBLIC_KEY_BYTES, "publicKey"),
  privateKey: keyOf(PRIVATE_KEY_BYTES, "privateKey"),
});

const validateVapidKeys = schemaValidator(VapidKeysSchema, "vapid.json");
