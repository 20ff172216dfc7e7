import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { readFile } from "node:fs/promises";
import { dirname } from "node:path";
import { writeFileAtomic } from "./atomic-write.js";

/** Bytes of randomness in a generated token: 32 bytes, as 43 base64url characters. */
const TOKEN_BYTES = 32;
/** Shortest token accepted from a file or a variable: shorter ones are guessable. */
export const MIN_TOKEN_LENGTH = 16;

/**
 * Returns `token` when it can serve as a server's token: at least MIN_TOKEN_LENGTH characters, none
 * of them whitespace or control characters (which a bearer header cannot carry). Throws an Error that
 * names `source` (a variable or a file) and says how to fix it otherwise, for a clear startup failure.
 */
export function checkToken(token: string, source: string, remedy = "remove it to have one generated"): string {
  if (/[\s\p{Cc}]/u.test(token)) {
    throw new Error(
      `${source} holds a token with spaces or control characters; use ${MIN_TOKEN_LENGTH} or more printable characters (${remedy})`,
    );
  }
  if (token.length < MIN_TOKEN_LENGTH) {
    throw new Error(
      `${source} holds a token of ${token.length} character${token.length === 1 ? "" : "s"}; tokens need at least ${MIN_TOKEN_LENGTH} (${remedy})`,
    );
  }
  return token;
}

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
 * Returns `created: true` when it had to be generated, so the caller can tell the user. When it cannot
 * be written, the error names the folder that must be writable and `variable`, which gives the token
 * instead.
 */
export async function loadOrCreateToken(
  path: string,
  variable = "STARAGENT_AUTH_TOKEN",
): Promise<{ token: string; created: boolean }> {
  try {
    const existing = (await readFile(path, "utf8")).trim();
    if (existing.length > 0) return { token: checkToken(existing, `token file ${path}`), created: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  const token = generateToken();
  try {
    await writeFileAtomic(path, `${token}\n`, 0o600);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? "error";
    // A read-only or full home: say what to change, not only the system's word for it.
    throw new Error(
      `cannot write the token file ${path} (${code}): make ${dirname(path)} writable (or set STARAGENT_HOME to a writable folder), or give the token in ${variable} instead (16 or more printable characters)`,
    );
  }
  return { token, created: true };
}
