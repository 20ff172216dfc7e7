import { createHmac, randomBytes } from "node:crypto";
import { join } from "node:path";
import * as v from "valibot";
import { JsonFile, schemaValidator } from "../common/json-file.js";
import type { Logger } from "../common/log.js";
import { secretsEqual } from "../common/tokens.js";

/** Name of the browser login cookie over cleartext. */
export const SESSION_COOKIE = "staragent_session";
/**
 * Name of the cookie under TLS: `__Host-` makes the browser refuse it unless it is `Secure`, has
 * `Path=/` and no `Domain`, so no other host name (a sibling subdomain) can set or widen it.
 */
export const SECURE_SESSION_COOKIE = `__Host-${SESSION_COOKIE}`;
/** A login ends after this long without use; every use renews it. */
export const LOGIN_IDLE_MS = 7 * 24 * 3600 * 1000;
/** A login ends this long after it began, however much it is used: the person logs in again. */
export const LOGIN_MAX_AGE_MS = 30 * 24 * 3600 * 1000;
/** Most logins kept; the least recently used beyond it ends. */
const MAX_LOGINS = 64;
/** Use is written to the state file at most this often per login (reads stay off the disk). */
const LAST_USED_WRITE_MS = 5 * 60 * 1000;
/** Random bytes in each login id and secret. */
const SECRET_BYTES = 32;
const ID_BYTES = 9;
/** Longest user agent kept for `staragent logins ls`. */
const MAX_AGENT_CHARS = 200;

/** One browser login as the Hub keeps it: never its secrets, only their MACs under the user token. */
interface StoredLogin {
  readonly id: string;
  readonly cookieMac: string;
  readonly keyMac: string;
  readonly created: number;
  lastUsed: number;
  readonly peer: string;
  readonly userAgent: string;
}

/** A login as listed for people. */
export interface LoginInfo {
  readonly id: string;
  readonly created: number;
  readonly lastUsed: number;
  readonly expires: number;
  readonly peer: string;
  readonly userAgent: string;
}

/** What a new login hands the browser: the cookie's value and the key for its origin-scoped storage. */
export interface IssuedLogin {
  readonly id: string;
  readonly cookie: string;
  readonly key: string;
}

interface LoginsFile {
  readonly version: 1;
  readonly logins: StoredLogin[];
}

/**
 * Browser logins kept by the Hub (`$STARAGENT_HOME/logins.json`, 0600), so that logging out, or
 * `staragent logins revoke`, ends a login for good, and each login needs both its cookie and its key
 * (see LOGIN_KEY_HEADER in services/common/auth.ts). Secrets are stored as HMACs keyed by the user token: replacing the token
 * ends every login. Lookups are in memory; the file is written when logins begin, end or are used
 * after a while.
 */
export class LoginSessions {
  private readonly logins = new Map<string, StoredLogin>();
  private readonly file: JsonFile<LoginsFile>;
  private readonly written = new Map<string, number>();
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly token: string,
    home: string,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.file = new JsonFile(join(home, "logins.json"), validateLogins, () => ({ version: 1, logins: [] }), log);
  }

  /** Reads the logins kept by an earlier run of the Hub. */
  async load(): Promise<void> {
    const { logins } = await this.file.read();
    for (const login of logins) {
      this.logins.set(login.id, login);
      this.written.set(login.id, login.lastUsed);
    }
    this.expire();
  }

  /** Starts a login for a browser at `peer`. */
  issue(peer: string, userAgent: string): IssuedLogin {
    this.expire();
    const id = randomBytes(ID_BYTES).toString("base64url");
    const cookieSecret = randomBytes(SECRET_BYTES).toString("base64url");
    const key = randomBytes(SECRET_BYTES).toString("base64url");
    const now = this.now();
    this.logins.set(id, {
      id,
      cookieMac: this.mac("cookie", cookieSecret),
      keyMac: this.mac("key", key),
      created: now,
      lastUsed: now,
      peer: peer.slice(0, MAX_AGENT_CHARS),
      userAgent: userAgent.slice(0, MAX_AGENT_CHARS),
    });
    while (this.logins.size > MAX_LOGINS) this.logins.delete(this.leastRecentlyUsed());
    this.persist();
    return { id, cookie: `${id}.${cookieSecret}`, key };
  }

  /**
   * The login id when `cookieHeader` holds a live login's cookie and `key` is that login's key (both
   * are needed), else undefined. Renews the login.
   */
  verify(cookieHeader: string, key: string): string | undefined {
    const login = this.fromCookie(cookieHeader);
    if (!login || !secretsEqual(this.mac("key", key), login.keyMac)) return undefined;
    this.touch(login);
    return login.id;
  }

  /** The login id of a live login's cookie, without its key: enough to show a page or to log out, nothing more. */
  cookieLogin(cookieHeader: string): string | undefined {
    return this.fromCookie(cookieHeader)?.id;
  }

  /** Ends one login; false when there is no such login. */
  revoke(id: string): boolean {
    const had = this.logins.delete(id);
    if (had) this.persist();
    return had;
  }

  /** Ends every login; returns how many there were. */
  revokeAll(): number {
    const count = this.logins.size;
    this.logins.clear();
    if (count > 0) this.persist();
    return count;
  }

  /** The live logins, most recently used first. */
  list(): LoginInfo[] {
    this.expire();
    return [...this.logins.values()]
      .sort((a, b) => b.lastUsed - a.lastUsed)
      .map((l) => ({
        id: l.id,
        created: l.created,
        lastUsed: l.lastUsed,
        expires: this.expiry(l),
        peer: l.peer,
        userAgent: l.userAgent,
      }));
  }

  /** Waits for the state file writes begun so far (tests, shutdown). */
  flushed(): Promise<void> {
    return this.writing;
  }

  private fromCookie(cookieHeader: string): StoredLogin | undefined {
    const cookies = parseCookies(cookieHeader);
    const value = cookies.get(SECURE_SESSION_COOKIE) ?? cookies.get(SESSION_COOKIE);
    if (!value) return undefined;
    const dot = value.indexOf(".");
    if (dot <= 0) return undefined;
    const login = this.logins.get(value.slice(0, dot));
    if (!login || !secretsEqual(this.mac("cookie", value.slice(dot + 1)), login.cookieMac)) return undefined;
    if (this.now() >= this.expiry(login)) {
      this.revoke(login.id);
      return undefined;
    }
    return login;
  }

  private touch(login: StoredLogin): void {
    login.lastUsed = this.now();
    if (login.lastUsed - (this.written.get(login.id) ?? 0) >= LAST_USED_WRITE_MS) this.persist();
  }

  private expiry(login: StoredLogin): number {
    return Math.min(login.lastUsed + LOGIN_IDLE_MS, login.created + LOGIN_MAX_AGE_MS);
  }

  private expire(): void {
    const now = this.now();
    let changed = false;
    for (const login of this.logins.values()) {
      if (now >= this.expiry(login)) {
        this.logins.delete(login.id);
        changed = true;
      }
    }
    if (changed) this.persist();
  }

  private leastRecentlyUsed(): string {
    let oldest: StoredLogin | undefined;
    for (const login of this.logins.values()) if (!oldest || login.lastUsed < oldest.lastUsed) oldest = login;
    return oldest?.id ?? "";
  }

  private mac(kind: "cookie" | "key", secret: string): string {
    return createHmac("sha256", this.token).update(`staragent-login-${kind}:${secret}`).digest("base64url");
  }

  /** Writes the logins, one write after another; a failed write is logged (logins still work in memory). */
  private persist(): void {
    const snapshot: LoginsFile = { version: 1, logins: [...this.logins.values()].map((l) => ({ ...l })) };
    for (const l of snapshot.logins) this.written.set(l.id, l.lastUsed);
    this.writing = this.writing
      .then(() => this.file.write(snapshot))
      .catch((err: unknown) => {
        this.log.warn("browser logins are kept in memory only", {
          error: err instanceof Error ? err.message : String(err),
        });
      });
  }
}

/** Parses a `Cookie` header. */
export function parseCookies(header: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0) out.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  return out;
}

/** A text field: empty when missing or not text. */
const text = v.fallback(v.string(), "");
/** A time in milliseconds: 0 when missing or not a whole number. */
const millis = v.fallback(v.pipe(v.number(), v.safeInteger()), 0);

/** `logins.json`: each login's MACs and times; entries without their MACs are dropped. */
const LoginsFileSchema = v.pipe(
  v.object({
    logins: v.array(
      v.object({
        id: text,
        cookieMac: text,
        keyMac: text,
        created: millis,
        lastUsed: millis,
        peer: text,
        userAgent: text,
      }),
    ),
  }),
  v.transform(({ logins }) => ({
    version: 1 as const,
    logins: logins.filter((l) => l.id !== "" && l.cookieMac !== "" && l.keyMac !== ""),
  })),
);

const validateLogins = schemaValidator(LoginsFileSchema, "logins.json");
