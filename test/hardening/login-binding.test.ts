import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HubFixture, startHubFixture } from "../foundation/hub-fixture.js";
import { httpRequest as request } from "../support/http-request.js";
import { runProcess, STARAGENT_BIN } from "../support/servers.js";

/** The header the dashboard sends its login's key in (services/common/auth.ts, LOGIN_KEY_HEADER). */
const KEY_HEADER = "staragent-login-key";

describe("a login cookie captured on another port of the Hub's host", () => {
  let f: HubFixture;
  let own: string;
  beforeAll(async () => {
    f = await startHubFixture();
    own = f.hub.url;
  });
  afterAll(async () => {
    await f?.close();
  });

  /** Logs in as the dashboard does: the cookie, and the key the page keeps in its origin's storage. */
  async function browserLogin(): Promise<{ cookie: string; key: string }> {
    const reply = await request(`${own}/login`, {
      method: "POST",
      headers: {
        origin: own,
        accept: "application/json",
        "content-type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({ token: f.hub.token }).toString(),
    });
    expect(reply.status).toBe(200);
    const cookie = (reply.headers["set-cookie"]?.[0] ?? "").split(";")[0] ?? "";
    expect(cookie).toMatch(/^staragent_session=.+/);
    const { key } = JSON.parse(reply.body) as { key: string };
    return { cookie, key };
  }

  /** ListSessions replayed by a script that copied the cookie: it forges the Hub's own Origin. */
  const replay = (cookie: string, extra: Record<string, string> = {}) =>
    request(`${own}/staragent.v1.SessionService/ListSessions`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie, origin: own, ...extra },
      body: "{}",
    });

  it("is refused without the login's key, and works with it", async () => {
    const { cookie, key } = await browserLogin();
    const alone = await replay(cookie);
    expect(alone.status).toBe(401);
    expect(JSON.parse(alone.body)).toMatchObject({ code: "unauthenticated" });
    const wrongKey = await replay(cookie, { [KEY_HEADER]: `${key.slice(0, -2)}xx` });
    expect(JSON.parse(wrongKey.body)).toMatchObject({ code: "unauthenticated" });
    const withKey = await replay(cookie, { [KEY_HEADER]: key });
    expect(withKey.status).toBe(200);
    expect(JSON.parse(withKey.body)).not.toHaveProperty("code");
  });

  it("is worth nothing after logout, even with the key", async () => {
    const { cookie, key } = await browserLogin();
    expect((await replay(cookie, { [KEY_HEADER]: key })).status).toBe(200);
    const out = await request(`${own}/logout`, { method: "POST", headers: { cookie, origin: own } });
    expect(out.status).toBe(303);
    const after = await replay(cookie, { [KEY_HEADER]: key });
    expect(after.status).toBe(401);
    expect(JSON.parse(after.body)).toMatchObject({ code: "unauthenticated" });
  });

  it("cannot be paired with another login's key", async () => {
    const first = await browserLogin();
    const second = await browserLogin();
    expect(JSON.parse((await replay(first.cookie, { [KEY_HEADER]: second.key })).body)).toMatchObject({
      code: "unauthenticated",
    });
  });

  it("is listed by `staragent logins ls` and ended by `staragent logins revoke`", async () => {
    const { cookie, key } = await browserLogin();
    const id = cookie.slice(cookie.indexOf("=") + 1, cookie.indexOf("."));
    const cli = (...args: string[]) =>
      runProcess(process.execPath, [STARAGENT_BIN, "logins", ...args], { env: f.cliEnv });
    const listed = await cli("ls", "--json");
    expect(listed.code).toBe(0);
    const logins = (JSON.parse(listed.stdout) as { logins: { id: string }[] }).logins.map((l) => l.id);
    expect(logins).toContain(id);
    expect((await cli("ls")).stdout).toMatch(new RegExp(`^${id.replace(/[-]/g, "\\-")}\\s+127\\.0\\.0\\.1`, "m"));
    const one = await cli("revoke", id);
    expect(one).toMatchObject({ code: 0, stdout: "ended 1 login\n" });
    expect((await replay(cookie, { [KEY_HEADER]: key })).status).toBe(401);
    const again = await cli("revoke", id);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/no live login/);
    const other = await browserLogin();
    expect((await cli("revoke", "--all")).code).toBe(0);
    expect((await replay(other.cookie, { [KEY_HEADER]: other.key })).status).toBe(401);
  });
});
