import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../support/wait.js";
import { OpenPages } from "./support/browser.js";
import { type DashboardFixture, manySessions, SETUP_TIMEOUT_MS, startDashboard } from "./support/dashboard-fixture.js";

/** The scale: the list must stay light with this many sessions. */
const SESSION_COUNT = 300;
/** Row elements the page may hold at once, whatever the count (the list is virtualized). */
const MAX_ROW_ELEMENTS = 100;
/** Whole-test budget: 300 tmux sessions and the Hub's first full read of them on a busy 2-core machine. */
const TEST_TIMEOUT_MS = 120_000;

describe("the session list with 300 sessions", () => {
  let f: DashboardFixture;
  const pages = new OpenPages();

  beforeAll(async () => {
    f = await startDashboard();
    await f.tmux.run(...manySessions(SESSION_COUNT));
  }, SETUP_TIMEOUT_MS);

  afterEach(async () => {
    expect(await pages.closeAll()).toEqual([]);
  });

  afterAll(async () => {
    await f?.close();
  }, SETUP_TIMEOUT_MS);

  it(
    "holds fewer than 100 row elements, scrolls to the last session and reaches it from the keyboard",
    async () => {
      const v = await pages.add(f.browser);
      await f.login(v.page);
      const list = v.page.locator("sa-session-list .vlist-inner");
      let label: string | null = null;
      await waitFor(
        async () => {
          label = await list.getAttribute("aria-label");
          return label === `Sessions, ${SESSION_COUNT} shown`;
        },
        () => `all sessions in the list (it says ${JSON.stringify(label)})`,
        60_000,
      );
      const rows = () => v.page.locator("sa-session-list .vrow").count();
      expect(await rows()).toBeLessThan(MAX_ROW_ELEMENTS);
      expect(await v.page.locator("sa-session-list .row-session").count()).toBeGreaterThan(5);

      await v.page.locator("sa-session-list .vlist").evaluate((el) => {
        el.scrollTop = el.scrollHeight;
      });
      await v.page.locator('sa-session-list .row-session[data-key="nodes/local/sessions/bulk-300"]').waitFor();
      expect(await rows()).toBeLessThan(MAX_ROW_ELEMENTS);

      await v.page.locator("sa-session-list .vlist").evaluate((el) => {
        el.scrollTop = 0;
      });
      await v.page.locator('sa-session-list .row-session[data-key="nodes/local/sessions/bulk-001"] a').focus();
      await v.page.keyboard.press("End");
      await waitFor(
        () => v.page.evaluate(() => document.activeElement?.closest(".row-session")?.getAttribute("data-key")),
        "the focus to move",
      );
      expect(
        await v.page.evaluate(() => document.activeElement?.closest(".row-session")?.getAttribute("data-key")),
      ).toBe("nodes/local/sessions/bulk-300");
      await v.page.keyboard.press("ArrowUp");
      await waitFor(
        async () =>
          (await v.page.evaluate(() => document.activeElement?.closest(".row-session")?.getAttribute("data-key"))) ===
          "nodes/local/sessions/bulk-299",
        "ArrowUp to move to bulk-299",
      );
      await v.page.keyboard.press("Enter");
      await v.page.waitForURL((u) => u.pathname === "/sessions/local/bulk-299");
      expect(await rows()).toBeLessThan(MAX_ROW_ELEMENTS);
    },
    TEST_TIMEOUT_MS,
  );
});
