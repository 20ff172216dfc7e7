import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HubFixture, startHubFixture } from "../foundation/hub-fixture.js";
import { type HttpReply, httpRequest } from "../support/http-request.js";

/** More failed logins than the old per-address block allowed (20 a minute). */
const CROSS_SITE_ATTEMPTS = 30;
/** Failed logins answered at once before the slowdown holds them (DEFAULT_SLOWDOWN). */
const FREE_FAILURES = 5;
/** An origin configured with STARAGENT_ORIGINS (a TLS proxy in front of the Hub, say). */
const CONFIGURED = "https://hub.example.test";

/** One HTTP/1.1 request from `localAddress`; `signal` abandons it. */
function request(
  url: string,
  localAddress: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; signal?: AbortSignal },
): Promise<HttpReply> {
  return httpRequest(url, { ...options, localAddress });
}

describe("browser logins and origins on a real Hub", () => {
  let f: HubFixture;
  let own: string;
  let port: string;
  beforeAll(async () => {
    f = await startHubFixture({ env: { STARAGENT_ORIGINS: CONFIGURED } });
    own = f.hub.url;
    port = new URL(own).port;
  });
  afterAll(async () => {
    await f?.close();
  });

  const form = (token: string) => new URLSearchParams({ token }).toString();
  const login = (from: string, token: string, headers: Record<string, string>, signal?: AbortSignal) =>
    request(`${own}/login`, from, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
      body: form(token),
      signal,
    });
  const cookieOf = (reply: HttpReply) => (reply.headers["set-cookie"]?.[0] ?? "").split(";")[0] ?? "";

  it("refuses logins posted by a page elsewhere, so such a page cannot lock anyone out", async () => {
    const from = "127.0.9.1";
    for (let i = 0; i < CROSS_SITE_ATTEMPTS; i++) {
      const reply = await login(from, `guess-${i}-0123456789abcdef`, { origin: "http://evil.example" });
      expect(reply.status).toBe(403);
      expect(reply.headers["set-cookie"]).toBeUndefined();
    }
    const rightful = await login(from, f.hub.token, { origin: own });
    expect(rightful.status).toBe(303);
    expect(rightful.headers.location).toBe("/");
    expect(cookieOf(rightful)).toMatch(/^staragent_session=.+/);
  });

  it.each([
    ["another origin", { origin: "http://evil.example" }],
    ["an opaque origin (null)", { origin: "null" }],
    ["another port of this host", { origin: "http://127.0.0.1:1" }],
    ["no origin but a cross-site fetch", { "sec-fetch-site": "cross-site" }],
  ])("refuses a login with the right token from %s, setting no cookie", async (_what, headers) => {
    const reply = await login("127.0.9.2", f.hub.token, headers);
    expect(reply.status).toBe(403);
    expect(reply.headers["set-cookie"]).toBeUndefined();
  });

  it("accepts a login without an origin (curl) and from the loopback names and configured origins", async () => {
    expect((await login("127.0.9.3", f.hub.token, {})).status).toBe(303);
    expect(cookieOf(await login("127.0.9.3", f.hub.token, { "sec-fetch-site": "same-origin" }))).not.toBe("");
    const local = await login("127.0.9.3", f.hub.token, {
      origin: `http://localhost:${port}`,
      host: `localhost:${port}`,
    });
    expect(cookieOf(local)).not.toBe("");
    const proxied = await login("127.0.9.3", f.hub.token, { origin: CONFIGURED, host: "hub.example.test" });
    expect(cookieOf(proxied)).not.toBe("");
  });

  it("slows failed logins from the Hub's own page down, never the right one", async () => {
    const from = "127.0.9.4";
    for (let i = 0; i < FREE_FAILURES; i++) {
      const reply = await login(from, `wrong-${i}-0123456789abcdef`, { origin: own });
      expect(reply).toMatchObject({ status: 303, headers: { location: "/login?failed=1" } });
    }
    const gone = new AbortController();
    const held = Array.from({ length: 3 }, (_, i) =>
      login(from, `wrong-held-${i}-0123456789`, { origin: own }, gone.signal).then(
        (r) => r.status,
        () => "abandoned",
      ),
    );
    const rightful = await login(from, f.hub.token, { origin: own });
    expect(rightful.headers.location).toBe("/");
    expect(await Promise.race([held[2], Promise.resolve("held")])).toBe("held");
    gone.abort();
    expect(await held[2]).toBe("abandoned");
    await Promise.all(held);
  });

  it("refuses a logout posted by a page elsewhere", async () => {
    const cookie = cookieOf(await login("127.0.9.5", f.hub.token, { origin: own }));
    const foreign = await request(`${own}/logout`, "127.0.9.5", {
      method: "POST",
      headers: { cookie, origin: "http://evil.example" },
    });
    expect(foreign.status).toBe(403);
    expect(foreign.headers["set-cookie"]).toBeUndefined();
    const mine = await request(`${own}/logout`, "127.0.9.5", { method: "POST", headers: { cookie, origin: own } });
    expect(mine.status).toBe(303);
    expect(mine.headers["set-cookie"]?.[0]).toMatch(/^staragent_session=; .*Max-Age=0/);
  });

  it("refuses browser requests naming another host (DNS rebinding) and cookie calls judged by their Host", async () => {
    const evilHost = `evil.example:${port}`;
    const page = await request(`${own}/login`, "127.0.9.6", { headers: { host: evilHost } });
    expect(page.status).toBe(421);
    expect(page.body).toMatch(/does not answer to the name "evil\.example:\d+"; .*STARAGENT_ORIGINS/);
    const posted = await login("127.0.9.6", f.hub.token, { host: evilHost, origin: `http://${evilHost}` });
    expect(posted.status).toBe(421);

    const loggedIn = await login("127.0.9.6", f.hub.token, { origin: own, accept: "application/json" });
    const cookie = cookieOf(loggedIn);
    const { key } = JSON.parse(loggedIn.body) as { key: string };
    const list = (headers: Record<string, string>) =>
      request(`${own}/staragent.v1.SessionService/ListSessions`, "127.0.9.6", {
        method: "POST",
        headers: { "content-type": "application/json", cookie, "staragent-login-key": key, ...headers },
        body: "{}",
      });
    // The page's own Host and Origin agree, as they do after DNS rebinding: no longer enough.
    expect((await list({ host: evilHost, origin: `http://${evilHost}` })).status).toBe(403);
    expect((await list({ host: evilHost, origin: own })).status).toBe(401);
    expect((await list({ origin: own })).status).toBe(200);
    expect((await list({ host: `localhost:${port}`, origin: `http://localhost:${port}` })).status).toBe(200);
    expect((await list({ host: "hub.example.test", origin: CONFIGURED })).status).toBe(200);
  });

  it("refuses a bearer call made by a web page of another origin, even with the right token", async () => {
    const reply = await request(`${own}/staragent.v1.SessionService/ListSessions`, "127.0.9.7", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${f.hub.token}`,
        origin: "http://evil.example",
      },
      body: "{}",
    });
    expect(reply.status).toBe(403);
    expect(JSON.parse(reply.body)).toMatchObject({ code: "permission_denied" });
  });
});
