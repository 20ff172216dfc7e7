import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLogger } from "../common/log.js";
import {
  LOGIN_IDLE_MS,
  LOGIN_MAX_AGE_MS,
  LoginSessions,
  parseCookies,
  SECURE_SESSION_COOKIE,
  SESSION_COOKIE,
} from "./login-sessions.js";

const TOKEN = "the-user-token-0123456789";
const log = createLogger("test", "error");

describe("LoginSessions", () => {
  let home: string;
  let now: number;
  const clock = () => now;
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), "sa-logins-"));
    now = 1_700_000_000_000;
  });
  afterEach(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it("needs the cookie and the key of the same login", () => {
    const logins = new LoginSessions(TOKEN, home, log, clock);
    const a = logins.issue("127.0.0.1", "test");
    const b = logins.issue("127.0.0.1", "test");
    expect(logins.verify(`x=1; ${SESSION_COOKIE}=${a.cookie}`, a.key)).toBe(a.id);
    expect(logins.verify(`${SECURE_SESSION_COOKIE}=${a.cookie}`, a.key)).toBe(a.id);
    expect(logins.verify(`${SESSION_COOKIE}=${a.cookie}`, "")).toBeUndefined();
    expect(logins.verify(`${SESSION_COOKIE}=${a.cookie}`, b.key)).toBeUndefined();
    expect(logins.verify(`${SESSION_COOKIE}=${a.cookie}x`, a.key)).toBeUndefined();
    expect(logins.verify(`${SESSION_COOKIE}=${a.id}`, a.key)).toBeUndefined();
    expect(logins.verify("", a.key)).toBeUndefined();
  });

  it("ends a login after the idle time, renews it with use, and ends it at the maximum age", () => {
    const logins = new LoginSessions(TOKEN, home, log, clock);
    const a = logins.issue("p", "u");
    const cookie = `${SESSION_COOKIE}=${a.cookie}`;
    for (let t = 0; t < LOGIN_MAX_AGE_MS - LOGIN_IDLE_MS; t += LOGIN_IDLE_MS / 2) {
      now += LOGIN_IDLE_MS / 2;
      expect(logins.verify(cookie, a.key)).toBe(a.id);
    }
    now = 1_700_000_000_000 + LOGIN_MAX_AGE_MS;
    expect(logins.verify(cookie, a.key)).toBeUndefined();
    const b = logins.issue("p", "u");
    now += LOGIN_IDLE_MS;
    expect(logins.verify(`${SESSION_COOKIE}=${b.cookie}`, b.key)).toBeUndefined();
    expect(logins.list()).toEqual([]);
  });

  it("revokes one or all, keeps them across restarts (0600) and forgets them when the token changes", async () => {
    const logins = new LoginSessions(TOKEN, home, log, clock);
    const a = logins.issue("127.0.0.1", "browser A");
    const b = logins.issue("127.0.0.2", "browser B");
    expect(logins.revoke(a.id)).toBe(true);
    expect(logins.revoke(a.id)).toBe(false);
    await logins.flushed();
    expect((await stat(join(home, "logins.json"))).mode & 0o777).toBe(0o600);
    const again = new LoginSessions(TOKEN, home, log, clock);
    await again.load();
    expect(again.list().map((l) => [l.id, l.userAgent])).toEqual([[b.id, "browser B"]]);
    expect(again.verify(`${SESSION_COOKIE}=${b.cookie}`, b.key)).toBe(b.id);
    expect(again.verify(`${SESSION_COOKIE}=${a.cookie}`, a.key)).toBeUndefined();
    const otherToken = new LoginSessions("another-token-0123456789", home, log, clock);
    await otherToken.load();
    expect(otherToken.verify(`${SESSION_COOKIE}=${b.cookie}`, b.key)).toBeUndefined();
    expect(again.revokeAll()).toBe(1);
    expect(again.cookieLogin(`${SESSION_COOKIE}=${b.cookie}`)).toBeUndefined();
  });
});

describe("parseCookies", () => {
  it("reads name=value pairs, keeping '=' inside values", () => {
    expect([...parseCookies("a=1; b = x=y ;junk")]).toEqual([
      ["a", "1"],
      ["b", "x=y"],
    ]);
  });
});
