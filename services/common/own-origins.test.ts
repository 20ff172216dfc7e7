import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { OwnOrigins, parseOrigins } from "./own-origins.js";

describe("parseOrigins", () => {
  it("reads origins separated by commas or spaces, normalised", () => {
    expect(parseOrigins("https://Hub.Example.com, http://box.tailnet.ts.net:8080  https://x.test:443", "V")).toEqual([
      "https://hub.example.com",
      "http://box.tailnet.ts.net:8080",
      "https://x.test",
    ]);
    expect(parseOrigins("", "V")).toEqual([]);
  });

  it.each(["hub.example.com", "ftp://hub", "https://hub/path", "https://u:p@hub", "https://hub/", "https://hub?x=1"])(
    "refuses %j naming the variable",
    (value) => {
      expect(() => parseOrigins(value, "STARAGENT_ORIGINS")).toThrow(/^STARAGENT_ORIGINS: .* is not an origin/);
    },
  );
});

describe("OwnOrigins", () => {
  const loopback = new OwnOrigins(["https://hub.example.com"]);
  loopback.bind("127.0.0.1", 8080);

  it("knows the address it listens on, the loopback names and the configured origins", () => {
    for (const origin of [
      "http://127.0.0.1:8080",
      "http://localhost:8080",
      "http://LOCALHOST:8080",
      "http://[::1]:8080",
      "https://hub.example.com",
    ]) {
      expect(loopback.isOwnOrigin(origin)).toBe(true);
    }
    for (const host of ["127.0.0.1:8080", "localhost:8080", "[::1]:8080", "hub.example.com", "Hub.Example.Com"]) {
      expect(loopback.isOwnHost(host)).toBe(true);
    }
  });

  it("refuses other names, other ports, other schemes, null and malformed values", () => {
    for (const origin of [
      "http://evil.example:8080",
      "http://127.0.0.1:9090",
      "https://127.0.0.1:8080",
      "http://hub.example.com",
      "null",
      "",
      "not a url",
    ]) {
      expect(loopback.isOwnOrigin(origin)).toBe(false);
    }
    for (const host of [
      "evil.example:8080",
      "127.0.0.1",
      "127.0.0.1:80",
      "",
      "127.0.0.1:8080/x",
      "a@127.0.0.1:8080",
      "127.0.0.1:8080 x",
    ]) {
      expect(loopback.isOwnHost(host)).toBe(false);
    }
  });

  it("on every interface, knows this machine's addresses and host name", () => {
    const all = new OwnOrigins();
    all.bind("0.0.0.0", 9000);
    expect(all.isOwnHost(`${hostname()}:9000`)).toBe(true);
    expect(all.isOwnHost("127.0.0.1:9000")).toBe(true);
    expect(all.isOwnHost("evil.example:9000")).toBe(false);
  });

  it("with TLS, its origins are https, and a Host with the scheme's default port written out is its own", () => {
    const secure = new OwnOrigins(["https://hub.example.com"]);
    secure.bind("127.0.0.1", 443, "https");
    expect(secure.isOwnOrigin("https://127.0.0.1")).toBe(true);
    expect(secure.isOwnOrigin("https://localhost:443")).toBe(true);
    expect(secure.isOwnOrigin("http://127.0.0.1:443")).toBe(false);
    for (const host of ["127.0.0.1", "127.0.0.1:443", "localhost", "hub.example.com:443"]) {
      expect(secure.isOwnHost(host)).toBe(true);
    }
    expect(secure.isOwnHost("127.0.0.1:80")).toBe(false);
  });
});
