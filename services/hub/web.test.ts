import { describe, expect, it } from "vitest";
import { BrowserSessions, parseCookies, SESSION_COOKIE } from "./web.js";

/** A login lasts 30 days (SESSION_LIFETIME_MS in web.ts). */
const LIFETIME_MS = 30 * 24 * 3600 * 1000;

describe("BrowserSessions", () => {
  const sessions = new BrowserSessions("the-user-token-0123456789");
  const now = 1_800_000_000_000;

  it("verifies the cookies it issued", () => {
    const value = sessions.issue(now);
    expect(sessions.verify(`other=1; ${SESSION_COOKIE}=${value}`, now + 1_000)).toBe(value);
  });

  it("refuses cookies that expired, come from the future, were tampered with or signed with another token", () => {
    const value = sessions.issue(now);
    const [issued, mac] = value.split(".");
    expect(sessions.verify(`${SESSION_COOKIE}=${value}`, now + LIFETIME_MS + 1)).toBeUndefined();
    expect(sessions.verify(`${SESSION_COOKIE}=${value}`, now - 120_000)).toBeUndefined();
    expect(sessions.verify(`${SESSION_COOKIE}=${Number(issued) + 1}.${mac}`, now)).toBeUndefined();
    expect(sessions.verify(`${SESSION_COOKIE}=${issued}.${mac}x`, now)).toBeUndefined();
    expect(sessions.verify(`${SESSION_COOKIE}=${issued}`, now)).toBeUndefined();
    expect(sessions.verify("", now)).toBeUndefined();
    const other = new BrowserSessions("another-token-0123456789");
    expect(other.verify(`${SESSION_COOKIE}=${value}`, now)).toBeUndefined();
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
