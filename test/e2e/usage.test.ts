import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../support/wait.js";
import { OpenPages } from "./support/browser.js";
import { type DashboardFixture, SETUP_TIMEOUT_MS, startDashboard } from "./support/dashboard-fixture.js";
import { sessionRow } from "./support/dashboard-page.js";

/** Whole-test budget: two stand-in turns and a browser page on a busy 2-core machine. */
const TEST_TIMEOUT_MS = 60_000;

describe("usage in the dashboard", () => {
  let f: DashboardFixture;
  const pages = new OpenPages();

  beforeAll(async () => {
    f = await startDashboard({ env: { STANDIN_THINK_MS: "10", STANDIN_TURN_MS: "20" } });
  }, SETUP_TIMEOUT_MS);

  afterEach(async () => {
    expect(await pages.closeAll()).toEqual([]);
  });

  afterAll(async () => {
    await f?.close();
  }, SETUP_TIMEOUT_MS);

  it(
    "shows a context meter on the row (none for a shell), the usage panel in the session view, and a hit limit as a banner",
    async () => {
      await f.sessions.createSession({ parent: "nodes/local", sessionId: "metered", cwd: f.dir, command: ["claude"] });
      await f.sessions.createSession({ parent: "nodes/local", sessionId: "plain", cwd: f.dir, command: ["bash"] });
      const name = "nodes/local/sessions/metered";
      await waitFor(
        async () => (await f.tmux.run("capture-pane", "-p", "-t", "=metered:")).includes("? for shortcuts"),
        "the claude stand-in's input box",
      );
      for (const text of ["first", "second"]) await f.sessions.sendChatMessage({ name, text });
      // The stand-in's replies: 4 in + 1000 cache read, 12 out each (test/stand-ins/lib/claude.mjs).
      await waitFor(
        async () => (await f.sessions.getSession({ name })).session?.usage?.totalOutputTokens === 24n,
        "the Hub to report two turns' usage",
      );
      const v = await pages.add(f.browser);
      await f.login(v.page, "/");
      const meter = sessionRow(v.page, name).locator("sa-context-meter .context-meter");
      await meter.waitFor();
      // 1004 of claude-opus-4-6's 200k window.
      expect(await meter.getAttribute("aria-valuenow")).toBe("1");
      expect((await meter.textContent())?.trim()).toBe("1%");
      await sessionRow(v.page, "nodes/local/sessions/plain").waitFor();
      expect(await sessionRow(v.page, "nodes/local/sessions/plain").locator("sa-context-meter").count()).toBe(0);

      await f.login(v.page, "/sessions/local/metered/chat");
      const panel = v.page.locator("sa-usage-panel .usage-panel");
      await panel.waitFor();
      const fields = Object.fromEntries(
        await panel
          .locator(".usage-fields > div")
          .evaluateAll((divs) =>
            divs.map((d) => [
              d.querySelector("dt")?.textContent?.trim() ?? "",
              d.querySelector("dd")?.textContent?.replace(/\s+/g, " ").trim() ?? "",
            ]),
          ),
      );
      expect(fields).toEqual({
        Model: "claude-opus-4-6",
        Context: "1 % 1.0k of 200k",
        "Last turn": "1.0k",
        Total: "2.0k in (2.0k cached) · 24 out",
      });
      expect(await v.page.locator("sa-usage-panel .usage-limit").count()).toBe(0);

      await f.sessions.sendChatMessage({ name, text: "limit" });
      const banner = v.page.locator("sa-usage-panel .usage-limit");
      await banner.waitFor();
      expect((await banner.textContent())?.replace(/\s+/g, " ").trim()).toBe("Usage limit reached, resets 3pm (UTC)");
      await f.login(v.page, "/");
      await sessionRow(v.page, name).locator("sa-context-meter .context-limit").waitFor();
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "shows a node's plan limits (Codex's 5-hour and weekly windows) on its card",
    async () => {
      await f.sessions.createSession({ parent: "nodes/local", sessionId: "windows", cwd: f.dir, command: ["codex"] });
      const name = "nodes/local/sessions/windows";
      await waitFor(
        async () => (await f.tmux.run("capture-pane", "-p", "-t", "=windows:")).includes("Ask Codex to do anything"),
        "the codex stand-in's composer",
      );
      await f.sessions.sendChatMessage({ name, text: "first" });
      // The codex stand-in's windows fill by 10 % and 2 % a turn (test/stand-ins/lib/codex.mjs).
      await waitFor(
        async () => (await f.sessions.getSession({ name })).session?.usage?.rateLimits[0]?.usedPercent === 10,
        "the Hub to report the rate limits",
      );
      const v = await pages.add(f.browser);
      await f.login(v.page, "/nodes");
      const limits = v.page.locator("sa-plan-limits .plan-limit");
      await limits.first().waitFor();
      const texts = (await limits.allTextContents()).map((t) => t.replace(/\s+/g, " ").trim());
      expect(texts).toEqual([
        // The time is in the browser's locale: "23:33" or "11:33 PM"; the weekly one is a day away, so dated.
        expect.stringMatching(/^5h 10 % \(resets \d{1,2}:\d\d( [AP]M)?\)$/),
        expect.stringMatching(/^weekly 2 % \(resets \w+ \d+, \d{1,2}:\d\d( [AP]M)?\)$/),
      ]);
    },
    TEST_TIMEOUT_MS,
  );
});
