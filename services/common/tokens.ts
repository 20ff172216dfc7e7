import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { chmod, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { dirname } from "node:path";

/** Bytes of randomness in a generated token: 32 bytes, as 43 base64url characters. */
const TOKEN_BYTES = 32;

/** Compares two secrets in time independent of where they differ. */
export function secretsEqual(given: string, expected: string): boolean {
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b) && given.length === expected.length;
}

/** A short, non-reversible label for a secret, safe to log and to key per-caller state by. */
export function secretLabel(secret: string): string {
  return createHash("sha256").update(secret).digest("hex").slice(0, 12);
}

/** Generates a new random token. */
export function generateToken(): string {
  return randomBytes(TOKEN_BYTES).toString("base64url");
}

/**
 * Returns the token stored at `path`, generating one (mode 0600, written atomically) on first use.
 * Returns `created: true` when it had to be generated, so the caller can tell the user.
 */
export async function loadOrCreateToken(path: string): Promise<{ token: string; created: boolean }> {
  try {
    const existing = (await readFile(path, "utf8")).trim();
    if (existing.length >= 16) return { token: existing, created: false };
    if (existing.length > 0) {
      throw new Error(`token file ${path} holds a token shorter than 16 characters; replace it or remove it`);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  const token = generateToken();
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.tmp-${process.pid}`;
  await writeFile(tmp, `${token}\n`, { mode: 0o600 });
  await chmod(tmp, 0o600);
  await rename(tmp, path);
  return { token, created: true };
}
