import * as pty from "node-pty";
import { chromium, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../support/wait.js";
import {
  CHROMIUM_ARGS,
  CHROMIUM_PATH,
  DESKTOP,
  OpenPages,
  PHONE,
  saveScreenshot,
  type TestPage,
} from "./support/browser.js";
import { type DashboardFixture, paneText, SETUP_TIMEOUT_MS, startDashboard } from "./support/dashboard-fixture.js";
import {
  linesScrolledBack,
  occurrences,
  terminalFitsItsBox,
  terminalSize,
  terminalText,
  waitForTerminal,
} from "./support/dashboard-page.js";

/** A bash with a fixed prompt and no user files, so the screen is predictable. */
const BASH = ["env", "PS1=ready$ ", "bash", "--norc", "--noprofile"];
/** Lines printed at once: far more than a screen, fewer than the history an attachment brings. */
const BURST_LINES = 1_500;
/** Whole-test budget: browsers, reattaching, a Hub restart on a busy 2-core machine. */
const TEST_TIMEOUT_MS = 90_000;

describe("the terminal in the dashboard", () => {
  let f: DashboardFixture;
  const pages = new OpenPages();

  const page = (options = DESKTOP): Promise<TestPage> => pages.add(f.browser, options);

  /** A bash session `id`, open in a new page with the focus in its attached terminal. */
  const shellPage = async (id: string): Promise<TestPage> => {
    await f.sessions.createSession({ parent: "nodes/local", sessionId: id, cwd: f.dir, command: BASH });
    const v = await page();
    await f.login(v.page, `/sessions/local/${id}`);
    await waitForTerminal(v.page);
    await v.page.locator("sa-terminal .xterm").click();
    return v;
  };

  const windowSize = async (session: string) => {
    const out = await f.tmux.run("display-message", "-p", "-t", `=${session}:`, "#{window_width}x#{window_height}");
    return out.trim();
  };

  beforeAll(async () => {
    f = await startDashboard();
  }, SETUP_TIMEOUT_MS);

  afterEach(async () => {
    expect(await pages.closeAll()).toEqual([]);
  });

  afterAll(async () => {
    await f?.close();
  }, SETUP_TIMEOUT_MS);

  it(
    "scrolls back through every line of a burst of output, though tmux drew the burst as a redraw",
    async () => {
      const v = await shellPage("burst");
      const xterm = v.page.locator("sa-terminal .xterm");
      await v.page.keyboard.type(`seq -f 'burst-%g' 1 ${BURST_LINES}; echo burst-done`);
      await v.page.keyboard.press("Enter");
      await waitFor(async () => (await terminalText(v.page)).includes("\nburst-done"), "the end of the burst");
      // Scrolling back with the wheel reads the pane's history again, then stays scrolled back.
      await xterm.hover();
      await v.page.mouse.wheel(0, -400);
      const burst = (text: string) => text.split("\n").filter((line) => /^burst-\d+$/.test(line.trimEnd()));
      // The history is written whole first, then the view returns to where the wheel took it.
      let state = "";
      await waitFor(
        async () => {
          const lines = burst(await terminalText(v.page)).length;
          const back = await linesScrolledBack(v.page);
          state = `${lines} lines, ${back} scrolled back`;
          return lines === BURST_LINES && back > 0;
        },
        () => `every line of the burst in the scrollback, and the view scrolled back (${state})`,
      );
      expect(burst(await terminalText(v.page)).map((l) => l.trimEnd())).toEqual(
        Array.from({ length: BURST_LINES }, (_, i) => `burst-${i + 1}`),
      );
      // Typing still goes to the session, once.
      await xterm.click();
      await v.page.keyboard.type("echo after-$((40+2))");
      await v.page.keyboard.press("Enter");
      await waitFor(
        async () => occurrences(await terminalText(v.page), "\nafter-42") === 1,
        "the echo after scrolling",
      );
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "types keys into tmux and shows the output; resizing the window resizes the pane of a sole viewer",
    async () => {
      const v = await shellPage("typing");
      await v.page.keyboard.type("echo typed-$((6*7))");
      await v.page.keyboard.press("Enter");
      await paneText(f.tmux, "typing", (t) => t.includes("typed-42"), "the echo in the pane");
      await waitFor(async () => (await terminalText(v.page)).includes("\ntyped-42"), "the echo in the page");

      const before = await terminalSize(v.page);
      await waitFor(
        async () => (await windowSize("typing")) === `${before.cols}x${before.rows - 1}`,
        "the pane to take the page's size",
      );
      await v.page.setViewportSize({ width: 1000, height: 600 });
      const after = await waitFor(async () => {
        const s = await terminalSize(v.page);
        return s.cols < before.cols && s.rows < before.rows ? s : undefined;
      }, "the terminal to fit the smaller window");
      // The window is the terminal minus tmux's status line.
      await waitFor(
        async () => (await windowSize("typing")) === `${after.cols}x${after.rows - 1}`,
        "the pane to follow",
      );
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "keeps the window's size when another client is attached, until Take over size",
    async () => {
      await f.sessions.createSession({ parent: "nodes/local", sessionId: "shared", cwd: f.dir, command: BASH });
      // The user's own terminal is attached at 70×20.
      const own = pty.spawn("tmux", f.tmux.client.argv(["attach-session", "-t", "=shared"]), {
        cols: 70,
        rows: 20,
        env: { ...f.tmux.client.environment, TERM: "xterm-256color" },
      });
      try {
        await waitFor(async () => (await windowSize("shared")) === "70x19", "the window to follow the user's terminal");
        const v = await page();
        await f.login(v.page, "/sessions/local/shared");
        await waitForTerminal(v.page);
        const takeOver = v.page.locator("sa-terminal button", { hasText: "Take over size" });
        await takeOver.waitFor();
        expect(await v.page.locator("sa-terminal .size-info").textContent()).toBe("70×20, set by another client");
        expect(await terminalSize(v.page)).toEqual({ cols: 70, rows: 20 });
        expect(await windowSize("shared")).toBe("70x19");
        await takeOver.click();
        await waitFor(async () => {
          const s = await terminalSize(v.page);
          return s.cols > 70 && (await windowSize("shared")) === `${s.cols}x${s.rows - 1}`;
        }, "the window to take this page's size");
      } finally {
        own.kill();
      }
    },
    TEST_TIMEOUT_MS,
  );

  /**
   * A bash session `id` whose window a desktop terminal of `cols` columns (a tmux client in a pty)
   * owns, open in a phone's page; `own.kill()` detaches the desktop.
   */
  async function phoneBesideDesktop(id: string, cols: number) {
    await f.sessions.createSession({ parent: "nodes/local", sessionId: id, cwd: f.dir, command: BASH });
    const own = pty.spawn("tmux", f.tmux.client.argv(["attach-session", "-t", `=${id}`]), {
      cols,
      rows: 30,
      env: { ...f.tmux.client.environment, TERM: "xterm-256color" },
    });
    try {
      await waitFor(async () => (await windowSize(id)) === `${cols}x29`, "the window to follow the desktop");
      const v = await page(PHONE);
      await f.login(v.page, `/sessions/local/${id}`);
      await waitForTerminal(v.page);
      return { own, v };
    } catch (err) {
      own.kill();
      throw err;
    }
  }

  /** The font size (CSS px) the page's terminal draws with now. */
  const terminalFont = (p: Page) =>
    p.evaluate(() => {
      const el = document.querySelector("sa-terminal") as (HTMLElement & { terminalFont(): number }) | null;
      return el ? el.terminalFont() : 0;
    });

  it(
    "on a phone, shrinks the font so a wider window of another client fits, never cropped, until Take over size",
    async () => {
      // A desktop terminal of 90 columns owns the window.
      const { own, v } = await phoneBesideDesktop("wide", 90);
      try {
        const font = () => terminalFont(v.page);
        let seen = "";
        await waitFor(
          async () => (await terminalSize(v.page)).cols === 90,
          "the phone to show the window's 90 columns",
        );
        // The whole width is on screen: the font shrank below the phone's own 12 px, and nothing is cut.
        await waitFor(
          async () => {
            seen = `font ${await font()}, fits ${await terminalFitsItsBox(v.page)}`;
            return (await font()) < 12 && (await terminalFitsItsBox(v.page));
          },
          () => `the font to shrink until the window fits (${seen})`,
        );
        expect(await font()).toBeGreaterThanOrEqual(6);
        await v.page.locator("sa-terminal button", { hasText: "Take over size" }).click();
        await waitFor(async () => {
          const s = await terminalSize(v.page);
          return (await font()) === 12 && s.cols < 90 && (await windowSize("wide")) === `${s.cols}x${s.rows - 1}`;
        }, "the own font back, and the window at the phone's size");
        expect(await terminalFitsItsBox(v.page)).toBe(true);
      } finally {
        own.kill();
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "on a phone, scrolls sideways to a window too wide even at the smallest font, its last column reachable",
    async () => {
      // A wide desktop terminal (a big monitor's 200 columns) owns the window.
      const { own, v } = await phoneBesideDesktop("wider", 200);
      try {
        await waitFor(async () => (await terminalSize(v.page)).cols === 200, "the phone to show the 200 columns");
        await waitFor(async () => (await terminalFont(v.page)) === 6, "the font at its floor");
        // Not cut: the box scrolls sideways, and scrolled to its end it shows the window's last column.
        const edge = await v.page.evaluate(() => {
          const box = document.querySelector<HTMLElement>("sa-terminal .term-scroll");
          const screen = document.querySelector("sa-terminal .xterm-screen");
          if (!box || !screen) return undefined;
          box.scrollLeft = box.scrollWidth;
          const b = box.getBoundingClientRect();
          const sc = screen.getBoundingClientRect();
          return {
            scrolls: box.scrollWidth > box.clientWidth,
            rightInView: sc.right <= b.right + 1 && sc.right > b.left,
            page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
          };
        });
        expect(edge).toEqual({ scrolls: true, rightInView: true, page: 0 });
        await saveScreenshot(v.page, "phone-light-terminal-scrolled-sideways");
      } finally {
        own.kill();
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "sends keys only to the session on screen when switching sessions",
    async () => {
      for (const id of ["first", "second"]) {
        await f.sessions.createSession({ parent: "nodes/local", sessionId: id, cwd: f.dir, command: BASH });
      }
      const v = await page();
      await f.login(v.page, "/sessions/local/first");
      await waitForTerminal(v.page);
      await v.page.locator("sa-terminal .xterm").click();
      await v.page.keyboard.type("echo one-$((1+1))");
      await v.page.locator('sa-session-list .row-session[data-key="nodes/local/sessions/second"] a').click();
      // Typed at once, before the new attachment is confirmed: held, then sent to "second" only.
      await v.page.keyboard.type("echo two-$((2+2))");
      await v.page.keyboard.press("Enter");
      await paneText(f.tmux, "second", (t) => t.includes("two-4"), "the keys in the second session");
      // Seen once in a fresh clone: the first session had only "echo one-". A repeat says what the page
      // reported (a toast for input that may not have arrived) and what it logged.
      await paneText(
        f.tmux,
        "first",
        (t) => t.includes("ready$ echo one-$((1+1))"),
        "the first session's own keys",
      ).catch(async (err: Error) => {
        const toasts = await v.page.locator("sa-toasts .toast").allTextContents();
        throw new Error(`${err.message}\ntoasts: ${JSON.stringify(toasts)}\npage errors: ${JSON.stringify(v.errors)}`);
      });
      expect(await f.tmux.run("capture-pane", "-p", "-t", "=first:")).not.toContain("two");
      expect(await f.tmux.run("capture-pane", "-p", "-t", "=second:")).not.toContain("one");
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "puts what a program copies with OSC 52 on the clipboard",
    async () => {
      await f.sessions.createSession({ parent: "nodes/local", sessionId: "copier", cwd: f.dir, command: BASH });
      // After the session: run alone, this test has no tmux server before it.
      await f.tmux.run("set-option", "-s", "set-clipboard", "on");
      const v = await page();
      await v.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: f.hub.url });
      await f.login(v.page, "/sessions/local/copier");
      await waitForTerminal(v.page);
      await v.page.locator("sa-terminal .xterm").click();
      await v.page.keyboard.type(String.raw`printf '\033]52;c;%s\a' "$(printf 'copied by a program' | base64)"`);
      await v.page.keyboard.press("Enter");
      // The first copy of a session asks the person (test/hardening/osc52-consent.test.ts).
      await v.page.click("text=Allow for this session");
      await waitFor(
        async () => (await v.page.evaluate(() => navigator.clipboard.readText())) === "copied by a program",
        "the text on the clipboard",
      );
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "attaches again at once when the network comes back, redrawing without duplicated output",
    async () => {
      const v = await shellPage("waking");
      await v.page.keyboard.type("printf 'once%s\\n' -only");
      await v.page.keyboard.press("Enter");
      await waitFor(async () => occurrences(await terminalText(v.page), "once-only") === 1, "the marker");
      const attachments = async () => (await f.tmux.run("list-clients", "-t", "=waking", "-F", "#{client_pid}")).trim();
      const before = await attachments();
      await v.page.evaluate(() => window.dispatchEvent(new Event("online")));
      await waitFor(async () => {
        const now = await attachments();
        return now !== "" && now !== before;
      }, "a new tmux client for the new attachment");
      await waitForTerminal(v.page);
      await v.page.keyboard.type("echo again-$((5*5))");
      await v.page.keyboard.press("Enter");
      await waitFor(async () => (await terminalText(v.page)).includes("\nagain-25"), "output on the new attachment");
      expect(occurrences(await terminalText(v.page), "once-only")).toBe(1);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "comes back from the back/forward cache attached again, without a reload and without duplicated output",
    async () => {
      await f.sessions.createSession({ parent: "nodes/local", sessionId: "cached", cwd: f.dir, command: BASH });
      // Playwright turns the back/forward cache off by default; this browser keeps it.
      const browser = await chromium.launch({
        executablePath: CHROMIUM_PATH,
        headless: true,
        args: CHROMIUM_ARGS,
        ignoreDefaultArgs: ["--disable-back-forward-cache"],
      });
      try {
        const context = await browser.newContext(DESKTOP);
        const p = await context.newPage();
        await f.login(p, "/sessions/local/cached");
        await waitForTerminal(p);
        await p.locator("sa-terminal .xterm").click();
        await p.keyboard.type("printf 'went%s\\n' -away");
        await p.keyboard.press("Enter");
        await waitFor(async () => occurrences(await terminalText(p), "went-away") === 1, "the marker");
        await p.evaluate(() => {
          (window as unknown as { sameDocument: boolean }).sameDocument = true;
          window.addEventListener("pageshow", (e) => {
            (window as unknown as { restored: boolean }).restored = e.persisted;
          });
        });
        await p.goto(`${f.hub.url}/favicon.svg`);
        await p.goBack({ waitUntil: "commit" });
        await waitFor(
          () => p.evaluate(() => (window as unknown as { restored?: boolean }).restored),
          "the page to be restored",
        );
        expect(await p.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument)).toBe(true);
        await waitForTerminal(p);
        await p.locator("sa-terminal .xterm").click();
        await p.keyboard.type("echo back-$((3*3))");
        await p.keyboard.press("Enter");
        await waitFor(async () => (await terminalText(p)).includes("\nback-9"), "output after coming back");
        expect(occurrences(await terminalText(p), "went-away")).toBe(1);
      } finally {
        await browser.close();
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "fits a phone (390×844) without horizontal overflow, and its quick keys Esc and Ctrl-C reach the pane",
    async () => {
      await f.sessions.createSession({
        parent: "nodes/local",
        sessionId: "keys",
        cwd: f.dir,
        command: ["sh", "-c", "stty raw -echo; printf 'keys> '; exec cat -v"],
      });
      for (const colorScheme of ["light", "dark"] as const) {
        const v = await page({ ...PHONE, colorScheme });
        await f.login(v.page);
        expect(await horizontalOverflow(v.page)).toEqual([]);
        await saveScreenshot(v.page, `phone-${colorScheme}-sessions`);
        await v.page.locator('sa-session-list .row-session[data-key="nodes/local/sessions/keys"] a').tap();
        await waitForTerminal(v.page);
        await v.page.locator("sa-quick-keys").waitFor();
        await waitFor(() => terminalFitsItsBox(v.page), "the whole terminal to be in view above the quick keys");
        expect(await horizontalOverflow(v.page)).toEqual([]);
        if (colorScheme === "light") {
          await v.page.locator('sa-quick-keys button[data-key="Esc"]').tap();
          await v.page.locator('sa-quick-keys button[data-key="Ctrl-C"]').tap();
          await paneText(f.tmux, "keys", (t) => t.includes("keys> ^[^C"), "Esc and Ctrl-C in the pane");
          await waitFor(async () => (await terminalText(v.page)).includes("keys> ^[^C"), "the keys echoed in the page");
        }
        await saveScreenshot(v.page, `phone-${colorScheme}-terminal`);
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "shows a Hub outage, then resumes its streams without a reload and without duplicated output",
    async () => {
      const v = await shellPage("outage");
      await v.page.keyboard.type("printf 'mark%s\\n' -before");
      await v.page.keyboard.press("Enter");
      await waitFor(async () => occurrences(await terminalText(v.page), "mark-before") === 1, "the marker in the page");
      await v.page.evaluate(() => {
        (window as unknown as { sameDocument: boolean }).sameDocument = true;
      });

      await f.restartHub(async () => {
        await v.page.locator("sa-banner .banner-hub").waitFor({ timeout: 15_000 });
        await v.page.locator("sa-terminal .conn-state.tone-bad").waitFor({ timeout: 15_000 });
        // Said once: the heading, not again in the network failure's own words.
        await v.page.locator("sa-banner .banner-hub", { hasText: "Retrying in" }).waitFor({ timeout: 15_000 });
        const banner = (await v.page.locator("sa-banner .banner-hub").textContent()) ?? "";
        expect(occurrences(banner.toLowerCase(), "cannot reach")).toBe(0);
        expect(occurrences(banner, "cannot be reached")).toBe(1);
      });
      await v.page.locator("sa-banner .banner-hub").waitFor({ state: "detached", timeout: 20_000 });
      await waitForTerminal(v.page);
      await v.page.locator("sa-terminal .xterm").click();
      await v.page.keyboard.type("printf 'mark%s\\n' -after");
      await v.page.keyboard.press("Enter");
      await waitFor(
        async () => occurrences(await terminalText(v.page), "mark-after") === 1,
        "output after the restart",
      );
      const text = await terminalText(v.page);
      expect(occurrences(text, "mark-before")).toBe(1);
      expect(occurrences(text, "printf 'mark%s\\n' -before")).toBe(1);
      expect(await v.page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument)).toBe(true);
    },
    TEST_TIMEOUT_MS,
  );
});

/** Elements that stick out of the viewport sideways (inside scrolling boxes they may; the page may not). */
async function horizontalOverflow(page: import("playwright-core").Page): Promise<string[]> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const out: string[] = [];
    if (document.documentElement.scrollWidth > width)
      out.push(`document ${document.documentElement.scrollWidth} > ${width}`);
    for (const el of Array.from(document.querySelectorAll("body *"))) {
      if (el.closest(".term-scroll, .vlist, dialog:not([open]), [hidden]")) continue;
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) continue;
      if (r.right > width + 1 || r.left < -1) {
        out.push(
          `${el.tagName.toLowerCase()}.${(el as HTMLElement).className} ${Math.round(r.left)}..${Math.round(r.right)}`,
        );
      }
    }
    return out.slice(0, 10);
  });
}
