import { describe, expect, it } from "vitest";
import { waitFor } from "../support/wait.js";
import { tmuxSession } from "./support/dashboard-fixture.js";
import { sessionRow, waitForTerminal } from "./support/dashboard-page.js";
import { dashboardSuite } from "./support/dashboard-suite.js";

/** Whole-test budget: two sessions opened and stopped on a busy 2-core machine. */
const TEST_TIMEOUT_MS = 60_000;

describe("the dialogs' calls against a real Hub", () => {
  const suite = dashboardSuite();

  const sessionNames = async () =>
    (await suite.f.tmux.run("list-sessions", "-F", "#{session_name}").catch(() => "")).split("\n");

  it(
    "says in the stop dialog why a stop failed, and opens without that error for the next session",
    async () => {
      const f = suite.f;
      const v = await suite.pages.add(f.browser);
      await tmuxSession(f.tmux, "stop-gone", f.dir, "bash");
      await tmuxSession(f.tmux, "stop-next", f.dir, "bash");
      try {
        await f.login(v.page);
        await v.page.goto(`${f.hub.url}/sessions/local/stop-gone`);
        await waitForTerminal(v.page);
        await v.page.click("sa-session-view .stop-button");
        const stop = v.page.locator("sa-stop-dialog dialog");
        await stop.getByRole("checkbox").check();
        // The session ends by itself while the dialog asks: the Hub's answer is shown in the dialog.
        await f.tmux.run("kill-session", "-t", "=stop-gone");
        await stop.locator("button.danger").click();
        await expect
          .poll(() => stop.locator(".form-error").textContent())
          .toBe("Session nodes/local/sessions/stop-gone not found.");
        expect(await stop.locator("button.danger").textContent()).toContain("Stop stop-gone");
        await stop.locator(".stop-cancel").click();

        // Opened from the list, in the same page: the same dialog, asked again.
        await sessionRow(v.page, "nodes/local/sessions/stop-next").click();
        await v.page.waitForURL((u) => u.pathname === "/sessions/local/stop-next");
        await waitForTerminal(v.page);
        await v.page.click("sa-session-view .stop-button");
        await expect.poll(() => stop.locator("h2").textContent()).toBe("Stop stop-next?");
        expect(await stop.locator(".form-error").count()).toBe(0);
        await stop.getByRole("checkbox").check();
        await stop.locator("button.danger").click();
        await v.page.waitForURL((u) => u.pathname === "/");
        await waitFor(async () => !(await sessionNames()).includes("stop-next"), "stop-next to end");
      } finally {
        for (const name of ["stop-gone", "stop-next"]) {
          await f.tmux.run("kill-session", "-t", `=${name}`).catch(() => undefined);
        }
      }
    },
    TEST_TIMEOUT_MS,
  );
});
