import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { OpenPages } from "../../e2e/support/browser.js";
import { type DashboardFixture, SETUP_TIMEOUT_MS, startDashboard } from "../../e2e/support/dashboard-fixture.js";

/** The dashboard's login link in chromium: a tab already on the login page, and links from other sites. */
describe("the login link", () => {
  let f: DashboardFixture;
  let foreign: http.Server;
  let foreignUrl: string;
  const pages = new OpenPages();

  beforeAll(async () => {
    f = await startDashboard();
    // Another program on another port of the same host, linking to the Hub's login page.
    foreign = http.createServer((req, res) => {
      const link = `${f.hub.url}/login#token=${decodeURIComponent((req.url ?? "/").slice(1))}`;
      res.writeHead(200, { "content-type": "text/html" });
      res.end(`<!doctype html><a id="go" href="${link}">open</a>`);
    });
    await new Promise<void>((resolve) => foreign.listen(0, "127.0.0.1", resolve));
    foreignUrl = `http://127.0.0.1:${(foreign.address() as AddressInfo).port}`;
  }, SETUP_TIMEOUT_MS);

  afterEach(async () => {
    expect(await pages.closeAll()).toEqual([]);
  });

  afterAll(async () => {
    await new Promise((resolve) => foreign?.close(resolve));
    await f?.close();
  }, SETUP_TIMEOUT_MS);

  it("logs in when opened in a tab already on the login page, where only the fragment changes", async () => {
    const { page: p } = await pages.add(f.browser);
    await p.goto(`${f.hub.url}/login`);
    await p.fill("#login-token", "not-the-token-0123456789");
    await p.click("sa-login button[type=submit]");
    await expect.poll(() => p.locator("sa-login .login-error").textContent()).toBe("That token was not accepted.");
    await p.goto(`${f.hub.url}/login#token=${f.hub.token}`);
    await p.waitForURL((u) => u.pathname === "/");
    await p.locator("sa-app header.topbar").waitFor();
  });

  it("asks before logging in with a token from a link on another site", async () => {
    const { page: p } = await pages.add(f.browser);
    const posted: string[] = [];
    p.on("request", (r) => {
      if (r.method() === "POST" && new URL(r.url()).pathname === "/login") posted.push(r.url());
    });
    await p.goto(`${foreignUrl}/${encodeURIComponent(f.hub.token)}`);
    await p.click("#go");
    const offer = p.locator("sa-login .login-offer");
    await offer.waitFor();
    expect(await offer.textContent()).toMatch(/Another site opened this login link/);
    expect(new URL(p.url()).searchParams.get("from")).toBe("elsewhere");
    expect(new URL(p.url()).hash).toBe("");
    expect(posted).toEqual([]);
    await p.click("text=Log in with the link's token");
    await p.waitForURL((u) => u.pathname === "/");
    await p.locator("sa-app header.topbar").waitFor();
    expect(posted).toHaveLength(1);
  });
});
