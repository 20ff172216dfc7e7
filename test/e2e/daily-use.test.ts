import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Cli, SessionStatus } from "../../gen/staragent/v1/session_pb.js";
import { waitFor } from "../support/wait.js";
import { DESKTOP, OpenPages, PHONE } from "./support/browser.js";
import { type DashboardFixture, SETUP_TIMEOUT_MS, startDashboard } from "./support/dashboard-fixture.js";
import { sessionRow } from "./support/dashboard-page.js";

/** Whole-test budget: a login, a create through the dialog, the session page. */
const TEST_TIMEOUT_MS = 60_000;
/**
 * On a 390x844 phone the list's first row starts within this many pixels of the top: the top bar,
 * the search, the status chips and one line of selects with the View button. With the layout
 * controls unfolded (two more lines) it started at 275 px.
 */
const PHONE_FIRST_ROW_TOP_PX = 230;

describe("daily use in the dashboard", () => {
  let f: DashboardFixture;
  const pages = new OpenPages();

  beforeAll(async () => {
    f = await startDashboard();
  }, SETUP_TIMEOUT_MS);
  afterEach(async () => {
    expect(await pages.closeAll()).toEqual([]);
  });
  afterAll(async () => {
    await f?.close();
  }, SETUP_TIMEOUT_MS);

  for (const [device, options] of [
    ["desktop", DESKTOP],
    ["phone", PHONE],
  ] as const) {
    it(
      `creates a session in ~ from the dialog, the folder expanded on its machine (${device})`,
      async () => {
        const id = `home-${device}`;
        const v = await pages.add(f.browser, options);
        await f.login(v.page);
        await v.page.getByRole("button", { name: "New session" }).first().click();
        const dialog = v.page.locator("sa-create-dialog dialog");
        await dialog.waitFor();
        await dialog.getByLabel("Name").fill(id);
        await dialog.getByLabel("Folder").fill("~");
        await dialog.getByLabel("A shell").check();
        await dialog.locator("button:has-text('Start session')").click();
        await v.page.waitForURL((u) => u.pathname === `/sessions/local/${id}`);
        // The "Started …" message stays clear of the terminal's lower half, where an agent's input line is,
        // and of the session's own controls (its way back to the list, Stop).
        const overlap = await waitFor(
          () =>
            v.page.evaluate((text) => {
              const toast = [...document.querySelectorAll("sa-toasts .toast")].find((t) =>
                t.textContent?.includes(text),
              );
              const panel = document.querySelector("sa-session-view .terminal-panel")?.getBoundingClientRect();
              const controls = [...document.querySelectorAll("sa-session-view .stop-button, sa-session-view a")];
              if (!toast || !panel || panel.height === 0 || controls.length === 0) return undefined;
              const box = toast.getBoundingClientRect();
              const covered = controls
                .filter((c) => {
                  const r = c.getBoundingClientRect();
                  if (r.width === 0) return false;
                  return r.left < box.right && r.right > box.left && r.top < box.bottom && r.bottom > box.top;
                })
                .map((c) => c.textContent?.trim() ?? "");
              return { toastBottom: box.bottom, panelMiddle: panel.top + panel.height / 2, covered };
            }, `Started ${id} on local`),
          "the toast and the terminal's panel",
        );
        expect(overlap.toastBottom).toBeLessThanOrEqual(overlap.panelMiddle);
        expect(overlap.covered).toEqual([]);
        const session = await waitFor(
          async () => (await f.sessions.getSession({ name: `nodes/local/sessions/${id}` })).session,
          `${id} to exist`,
        );
        expect(session.cwd).toBe(f.env.HOME);
        expect(join(f.dir, "home")).toBe(f.env.HOME);
        await f.sessions.stopSession({ name: session.name });
      },
      TEST_TIMEOUT_MS,
    );

    it(
      `keeps a session killed from outside as ended, its chat still readable (${device})`,
      async () => {
        const id = `killed-${device}`;
        const name = `nodes/local/sessions/${id}`;
        await f.sessions.createSession({ parent: "nodes/local", sessionId: id, cwd: f.dir, command: ["claude"] });
        try {
          await waitFor(
            async () => (await f.tmux.run("capture-pane", "-p", "-t", `=${id}:`)).includes("? for shortcuts"),
            "the claude stand-in's input box",
          );
          await f.sessions.sendChatMessage({ name, text: "keep this" });
          await waitFor(
            async () => (await f.sessions.getChat({ name })).messages.some((m) => m.text === "Done: keep this"),
            "the answer",
          );
          await f.tmux.run("kill-session", "-t", `=${id}`);
          const v = await pages.add(f.browser, options);
          await f.login(v.page);
          const tag = sessionRow(v.page, name).locator(".tag-exited");
          await tag.waitFor();
          expect(await tag.textContent()).toBe("ended");
          expect(await tag.getAttribute("title")).toMatch(/^This session has ended\. .*Stop dismisses it\.$/s);
          await v.page.goto(`${new URL(v.page.url()).origin}/sessions/local/${id}/chat`);
          await v.page.locator("sa-chat-view .msg-assistant", { hasText: "Done: keep this" }).waitFor();
          expect(await v.page.getByText("does not exist").count()).toBe(0);
        } finally {
          await f.sessions.stopSession({ name }).catch(() => undefined);
        }
      },
      TEST_TIMEOUT_MS,
    );

    it(
      `keeps a session whose command exited, its row saying how it ended (${device})`,
      async () => {
        const id = `exits-${device}`;
        const name = `nodes/local/sessions/${id}`;
        await f.sessions.createSession({
          parent: "nodes/local",
          sessionId: id,
          cwd: f.dir,
          command: ["sh", "-c", "exit 3"],
        });
        try {
          const v = await pages.add(f.browser, options);
          await f.login(v.page);
          const tag = sessionRow(v.page, name).locator(".tag-exited");
          await tag.waitFor();
          expect(await tag.textContent()).toBe("exited 3");
          expect(await tag.getAttribute("title")).toMatch(/exited with status 3; its pane is now a shell/);
          await sessionRow(v.page, name).click();
          await v.page.waitForURL((u) => u.pathname === `/sessions/local/${id}`);
          await v.page.locator("sa-terminal").waitFor();
          expect(await v.page.getByText("does not exist").count()).toBe(0);
        } finally {
          await f.sessions.stopSession({ name }).catch(() => undefined);
        }
      },
      TEST_TIMEOUT_MS,
    );

    it(
      `never takes a typed letter as a shortcut on a session's page after a reload (${device})`,
      async () => {
        const id = `typed-${device}`;
        const name = `nodes/local/sessions/${id}`;
        await f.sessions.createSession({ parent: "nodes/local", sessionId: id, cwd: f.dir, command: ["sleep", "600"] });
        try {
          const v = await pages.add(f.browser, options);
          await f.login(v.page, `/sessions/local/${id}`);
          await v.page.locator("sa-terminal").waitFor();
          await v.page.reload();
          await v.page.locator("sa-terminal").waitFor();
          // Wherever the focus is after the reload, "nvim" Enter must not open New session and create "vim".
          await v.page.locator("body").focus();
          await v.page.keyboard.type("nvim");
          await v.page.keyboard.press("Enter");
          expect(await v.page.locator("sa-create-dialog dialog[open]").count()).toBe(0);
          expect((await f.tmux.run("list-sessions", "-F", "#{session_name}")).split("\n")).not.toContain("vim");
          // On the list, n still opens it.
          await v.page.goto(`${f.hub.url}/`);
          // The session's row comes from the live sessions stream: the page knows it is logged in.
          await sessionRow(v.page, name).waitFor();
          await v.page.locator("body").focus();
          await v.page.keyboard.press("n");
          await v.page.locator("sa-create-dialog dialog[open]").waitFor();
        } finally {
          await f.sessions.stopSession({ name }).catch(() => undefined);
        }
      },
      TEST_TIMEOUT_MS,
    );
  }

  /** Runs `body` with a session `id` created running `command`, stopped afterwards, also when it failed. */
  const withSession = async (id: string, command: string[], body: (id: string, name: string) => Promise<void>) => {
    const name = `nodes/local/sessions/${id}`;
    await f.sessions.createSession({ parent: "nodes/local", sessionId: id, cwd: f.dir, command });
    try {
      await body(id, name);
    } finally {
      await f.sessions.stopSession({ name }).catch(() => undefined);
    }
  };

  /** The session the list-menu tests show a row of (made once). */
  const menuName = "nodes/local/sessions/menu-row";
  const menuSession = async () => {
    if ((await f.sessions.listSessions({ parent: "nodes/local" })).sessions.some((s) => s.name === menuName)) return;
    await f.sessions.createSession({
      parent: "nodes/local",
      sessionId: "menu-row",
      cwd: f.dir,
      command: ["sleep", "3600"],
    });
  };

  it(
    "folds the list's layout controls into one menu: the first row starts higher, and the menu opens them (phone)",
    async () => {
      await menuSession();
      const v = await pages.add(f.browser, PHONE);
      await f.login(v.page);
      const row = sessionRow(v.page, menuName);
      await row.waitFor();
      const top = (await row.boundingBox())?.y ?? Number.POSITIVE_INFINITY;
      expect(top).toBeLessThanOrEqual(PHONE_FIRST_ROW_TOP_PX);
      const sort = v.page.getByLabel("Sort");
      expect(await sort.isVisible()).toBe(false);
      const menu = v.page.locator("sa-session-list .list-view-menu");
      expect(await menu.getAttribute("aria-expanded")).toBe("false");
      await menu.click();
      expect(await menu.getAttribute("aria-expanded")).toBe("true");
      await sort.waitFor({ state: "visible" });
      // The controls in the menu work: compact rows.
      await v.page.getByRole("button", { name: "Compact" }).click();
      await v.page.locator("sa-session-list .vlist.compact").waitFor();
      await menu.click();
      await sort.waitFor({ state: "hidden" });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "shows the list's layout controls as before on a desktop, with no menu",
    async () => {
      await menuSession();
      const v = await pages.add(f.browser, DESKTOP);
      await f.login(v.page);
      await sessionRow(v.page, menuName).waitFor();
      expect(await v.page.getByLabel("Sort").isVisible()).toBe(true);
      expect(await v.page.locator("sa-session-list .list-view-menu").isVisible()).toBe(false);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "labels an agent's answers by that agent after it exits, and takes /exit from Chat without a warning",
    async () => {
      await withSession("exit-chat", ["claude"], async (id, name) => {
        await waitFor(
          async () => (await f.tmux.run("capture-pane", "-p", "-t", `=${id}:`)).includes("? for shortcuts"),
          "the claude stand-in's input box",
        );
        const v = await pages.add(f.browser, DESKTOP);
        await f.login(v.page, `/sessions/local/${id}/chat`);
        const composer = v.page.locator("sa-chat-composer");
        const status = composer.locator(".composer-status");
        await composer.locator("#composer-text").fill("hello there");
        await composer.locator("button:has-text('Send')").click();
        await status.locator(".delivered").waitFor();
        const answer = v.page.locator("sa-chat-view .msg-assistant", { hasText: "Done: hello there" });
        await answer.waitFor();
        expect(await answer.locator(".msg-role").textContent()).toBe("Claude Code");
        await waitFor(
          async () => (await f.sessions.getSession({ name })).session?.status !== SessionStatus.WORKING,
          "the turn to end",
        );

        // /exit ends the agent: that is its answer, so no "did not confirm" warning.
        await composer.locator("#composer-text").fill("/exit");
        await composer.locator("button:has-text('Send')").click();
        await status.locator(".delivered, .typed, .error-text").waitFor();
        expect(await status.textContent()).toMatch(/^\s*✓ Delivered \(claude exited after it\)\s*$/);

        // The pane is a shell now; the answer is still Claude Code's, as shown and after a reload.
        await waitFor(
          async () => (await f.sessions.getSession({ name })).session?.cli === Cli.SHELL,
          "the session's pane to be a shell",
        );
        await v.page.locator("sa-session-view .session-meta", { hasText: "shell" }).waitFor();
        expect(await answer.locator(".msg-role").textContent()).toBe("Claude Code");
        // What is sent now is typed into that shell, and the composer says so.
        await waitFor(
          async () =>
            /^Write to the shell…/.test((await composer.locator("#composer-text").getAttribute("placeholder")) ?? ""),
          "the composer to say it writes to the shell",
        );
        await v.page.reload();
        await answer.waitFor();
        expect(await answer.locator(".msg-role").textContent()).toBe("Claude Code");
      });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "opens New session asked for before the dialogs' code has loaded, once it has, its name field focused",
    async () => {
      const v = await pages.add(f.browser, DESKTOP);
      // The chunk of the dialogs and the session view (components/define-views.ts) is held back.
      let release = () => {};
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      let asked = false;
      await v.page.route("**/assets/define-views-*.js", async (route) => {
        asked = true;
        await released;
        await route.continue();
      });
      await f.login(v.page);
      await v.page.locator("sa-session-list").waitFor();
      // The page fetches it once the list is on screen, while the person reads.
      await waitFor(() => asked, "the views' chunk to be asked for");
      await v.page.locator("body").focus();
      await v.page.keyboard.press("n");
      await v.page.waitForTimeout(300);
      expect(await v.page.locator("sa-create-dialog dialog[open]").count()).toBe(0);
      release();
      await v.page.locator("sa-create-dialog dialog[open]").waitFor();
      await waitFor(
        () => v.page.evaluate(() => document.activeElement?.id === "create-name"),
        "the name field focused",
      );
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "leaves the focus in the settings menu when a session's view arrives after the person went there, so a key meant for the menu reaches no agent",
    async () => {
      await withSession("late-view", ["claude"], async (id) => {
        await waitFor(
          async () => (await f.tmux.run("capture-pane", "-p", "-t", `=${id}:`)).includes("? for shortcuts"),
          "the claude stand-in's input box",
        );
        const v = await pages.add(f.browser, DESKTOP);
        // The session view's chunk (components/define-views.ts) is held back, as a slow link would.
        let release = () => {};
        const released = new Promise<void>((resolve) => {
          release = resolve;
        });
        await v.page.route("**/assets/define-views-*.js", async (route) => {
          await released;
          await route.continue();
        });
        await f.login(v.page, `/sessions/local/${id}`);
        await v.page.click("details.menu > summary");
        const notify = v.page.getByLabel("Notify me when a session needs review");
        await notify.focus();
        release();
        // The view arrives, its terminal is drawn and attached; the focus stays where the person put it.
        await v.page.locator("sa-terminal .xterm-rows", { hasText: "? for shortcuts" }).waitFor();
        await v.page.waitForTimeout(500);
        expect(await v.page.evaluate(() => document.activeElement?.closest("details.menu") !== null)).toBe(true);
        // A letter typed there goes nowhere near the agent; one typed in the terminal does (the control).
        await v.page.keyboard.type("q");
        await v.page.locator("sa-session-view .terminal-panel").click();
        await v.page.keyboard.type("z");
        const inputLine = async () =>
          (await f.tmux.run("capture-pane", "-p", "-t", `=${id}:`)).split("\n").find((l) => l.startsWith("❯"));
        await waitFor(async () => (await inputLine())?.includes("z"), "the letter typed in the terminal");
        expect((await inputLine())?.trimEnd()).toBe("❯ z");
      });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "says when the dialogs' code could not be fetched, and fetches it again on the next try",
    async () => {
      const v = await pages.add(f.browser, DESKTOP);
      let refuse = true;
      let asked = 0;
      await v.page.route("**/assets/define-views-*.js", (route) => {
        asked++;
        return refuse ? route.abort("internetdisconnected") : route.continue();
      });
      await f.login(v.page);
      // The page fetches the chunk once the list is on screen (and it knows it is logged in, so `n` is
      // a shortcut): that fetch fails without a word.
      await waitFor(() => asked >= 1, "the views' chunk to be asked for");
      await v.page.locator("body").focus();
      await v.page.keyboard.press("n");
      await v.page.locator("sa-toasts .toast-error", { hasText: "could not be loaded" }).waitFor();
      expect(asked).toBeGreaterThanOrEqual(2);
      refuse = false;
      await v.page.locator("body").focus();
      await v.page.keyboard.press("n");
      await v.page.locator("sa-create-dialog dialog[open]").waitFor();
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "shows every tab of a session beside Stop on a phone, none clipped",
    async () => {
      await withSession("phone-tabs", ["sleep", "600"], async (id) => {
        const v = await pages.add(f.browser, PHONE);
        await f.login(v.page, `/sessions/local/${id}`);
        await v.page.locator("sa-session-view .stop-button").waitFor();
        const boxes = await v.page.evaluate(() => {
          const rect = (el: Element | null) => {
            const r = el?.getBoundingClientRect();
            return r ? { left: r.left, right: r.right, top: r.top, bottom: r.bottom } : undefined;
          };
          return {
            tabs: [...document.querySelectorAll("sa-session-view .tabs a")].map((a) => ({
              text: a.textContent?.trim() ?? "",
              ...rect(a),
            })),
            nav: rect(document.querySelector("sa-session-view .tabs")),
            stop: rect(document.querySelector("sa-session-view .stop-button")),
            width: document.documentElement.clientWidth,
          };
        });
        expect(boxes.tabs.map((t) => t.text)).toEqual(["Terminal", "Chat", "Changes", "Files"]);
        for (const tab of boxes.tabs) {
          // Wholly inside the tab bar's visible box (nothing scrolled out of it) and clear of Stop.
          expect(tab.left, tab.text).toBeGreaterThanOrEqual((boxes.nav?.left ?? 0) - 0.5);
          expect(tab.right, tab.text).toBeLessThanOrEqual((boxes.nav?.right ?? 0) + 0.5);
          expect(tab.right, tab.text).toBeLessThanOrEqual(boxes.width);
        }
        const stop = boxes.stop;
        expect(stop?.right ?? Number.POSITIVE_INFINITY).toBeLessThanOrEqual(boxes.width);
        for (const tab of boxes.tabs) {
          const apart =
            stop !== undefined &&
            ((tab.right ?? 0) <= stop.left ||
              (tab.left ?? 0) >= stop.right ||
              (tab.bottom ?? 0) <= stop.top ||
              (tab.top ?? 0) >= stop.bottom);
          expect(apart, `${tab.text} clear of Stop`).toBe(true);
        }
      });
    },
    TEST_TIMEOUT_MS,
  );
});
