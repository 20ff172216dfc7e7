import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { type Browser, type BrowserContext, type BrowserContextOptions, chromium, type Page } from "playwright-core";
import { REPO_ROOT } from "../../support/servers.js";

/** Debian's chromium (the Makefile installs it); playwright's own browser downloads cannot work here. */
export const CHROMIUM_PATH = process.env.STARAGENT_CHROMIUM ?? "/usr/bin/chromium";

/**
 * Flags for a quiet headless chromium on a closed network: no sandbox (tests run as root in
 * containers), no GPU, no QUIC, and nothing that phones home (background networking floods a network
 * without internet access). Playwright adds a fresh temporary profile (--user-data-dir) per launch.
 */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-dev-shm-usage",
];

/**
 * Where the tests save their screenshots: the README's own in docs/screenshots when asked
 * (`make screenshots`, which sets STARAGENT_UPDATE_SCREENSHOTS=1), else a scratch folder, so that a test
 * run leaves the tree as it found it.
 */
export const SCREENSHOT_DIR =
  process.env.STARAGENT_UPDATE_SCREENSHOTS === "1"
    ? join(REPO_ROOT, "docs", "screenshots")
    : join(REPO_ROOT, ".tmp", "screenshots");

/** Launches chromium for one test file. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
}

/** The kinds of screens the dashboard is tested on. */
export const DESKTOP: BrowserContextOptions = { viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 };
export const PHONE: BrowserContextOptions = {
  viewport: { width: 390, height: 844 },
  deviceScaleFactor: 2,
  isMobile: true,
  hasTouch: true,
};

/** A page with its own context (cookies, storage), and the script errors it raised. */
export interface TestPage {
  readonly context: BrowserContext;
  readonly page: Page;
  /** Uncaught exceptions and console errors (CSP violations show up here). */
  readonly errors: string[];
}

/** Opens a page in a fresh context; `errors` collects what went wrong inside the page. */
export async function openPage(browser: Browser, options: BrowserContextOptions = DESKTOP): Promise<TestPage> {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (err) => errors.push(`pageerror: ${err.message}`));
  page.on("console", (msg) => {
    // Chromium logs every HTTP error status as a console error; the calls that fail on purpose (a wrong
    // token, a name that exists) are checked by the tests themselves, so only other errors count.
    if (msg.type() === "error" && !msg.text().startsWith("Failed to load resource:"))
      errors.push(`console: ${msg.text()}`);
  });
  return { context, page, errors };
}

/** Saves a screenshot of the page as SCREENSHOT_DIR/<name>.png. */
export async function saveScreenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), animations: "disabled", caret: "hide" });
}

/**
 * The pages a test file opens: each test's pages are closed after it, and the errors they raised are
 * handed back so the file can require none.
 */
export class OpenPages {
  private readonly open: TestPage[] = [];

  /** Opens a page (see openPage) and keeps it for `closeAll`. */
  async add(browser: Browser, options?: BrowserContextOptions): Promise<TestPage> {
    const p = await openPage(browser, options);
    this.open.push(p);
    return p;
  }

  /** Closes every page opened since the last call; returns the errors they raised. */
  async closeAll(): Promise<string[]> {
    const errors = this.open.flatMap((p) => p.errors);
    for (const p of this.open.splice(0)) await p.context.close();
    return errors;
  }
}
