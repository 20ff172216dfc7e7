import type { Page, Worker } from "playwright-core";
import { waitFor } from "../../support/wait.js";

/** The row of a session in the list (the list renders only rows in view). */
export function sessionRow(page: Page, name: string) {
  return page.locator(`sa-session-list .row-session[data-key="${name}"]`);
}

/** The status word a session's row shows, or undefined when the row is not rendered. */
export async function rowStatus(page: Page, name: string): Promise<string | undefined> {
  const row = sessionRow(page, name);
  if ((await row.count()) === 0) return undefined;
  return ((await row.locator(".status").textContent()) ?? "").replace(/^\W+/u, "").trim();
}

/** Waits for the row of `name` to show `word` (working, review, idle), within `timeoutMs`. */
export function waitForRowStatus(page: Page, name: string, word: string, timeoutMs = 10_000): Promise<true> {
  return waitFor(async () => (await rowStatus(page, name)) === word || undefined, `${name} to show ${word}`, timeoutMs);
}

/** Everything the session's terminal holds (scrollback and screen) as text. */
export function terminalText(page: Page): Promise<string> {
  return page.evaluate(() => {
    const el = document.querySelector("sa-terminal") as (HTMLElement & { bufferText(): string }) | null;
    return el ? el.bufferText() : "";
  });
}

/** How many lines above the bottom the terminal's view is scrolled. */
export function linesScrolledBack(page: Page): Promise<number> {
  return page.evaluate(() => {
    const el = document.querySelector("sa-terminal") as (HTMLElement & { linesScrolledBack(): number }) | null;
    return el ? el.linesScrolledBack() : 0;
  });
}

/** The terminal's size in cells. */
export function terminalSize(page: Page): Promise<{ cols: number; rows: number }> {
  return page.evaluate(() => {
    const el = document.querySelector("sa-terminal") as
      | (HTMLElement & { terminalSize(): { cols: number; rows: number } })
      | null;
    return el ? el.terminalSize() : { cols: 0, rows: 0 };
  });
}

/** Waits until the terminal says it is attached. */
export async function waitForTerminal(page: Page): Promise<void> {
  await page.locator("sa-terminal .conn-state.tone-ok").waitFor({ timeout: 15_000 });
}

/** How often `needle` occurs in `text`. */
export function occurrences(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

/**
 * Clicks the first notification the service worker shows. Headless chromium has no notification to
 * click, so the worker gets the `notificationclick` event the browser would send it.
 */
export async function clickWorkerNotification(worker: Worker): Promise<void> {
  await worker.evaluate(async () => {
    const scope = globalThis as unknown as {
      registration: { getNotifications(): Promise<unknown[]> };
      dispatchEvent(e: Event): boolean;
      NotificationEvent: new (type: string, init: { notification: unknown }) => Event;
    };
    const [notification] = await scope.registration.getNotifications();
    scope.dispatchEvent(new scope.NotificationEvent("notificationclick", { notification }));
  });
}

/** The notifications the page's service worker currently shows. */
export function shownNotifications(page: Page): Promise<Array<{ title: string; body: string; tag: string }>> {
  return page.evaluate(async () => {
    // Chromium leaves a notification out of getNotifications() for good when it is listed while being
    // shown, so the page's own notification work is waited for first.
    const app = document.querySelector("sa-app") as unknown as { notificationsSettled?: () => Promise<void> } | null;
    await app?.notificationsSettled?.();
    const registration = await navigator.serviceWorker.getRegistration();
    if (!registration) return [];
    const list = await registration.getNotifications();
    return list.map((n) => ({ title: n.title, body: n.body, tag: n.tag }));
  });
}

/** True when the terminal's whole screen is inside its box (no row or column hidden below or beside). */
export function terminalFitsItsBox(page: Page): Promise<boolean> {
  return page.evaluate(() => {
    const box = document.querySelector("sa-terminal .term-scroll")?.getBoundingClientRect();
    const screen = document.querySelector("sa-terminal .xterm-screen")?.getBoundingClientRect();
    if (!box || !screen || screen.height === 0) return false;
    return screen.bottom <= box.bottom + 1 && screen.right <= box.right + 1;
  });
}

/**
 * What the page shows about typing into its terminal, for a failure's message: where the focus is,
 * the terminal's connection line and size, and any toasts.
 */
export function typingReport(page: Page): Promise<string> {
  return page.evaluate(() => {
    const at = document.activeElement;
    const focus = at
      ? `${at.tagName.toLowerCase()}${at.className ? `.${String(at.className).split(" ").join(".")}` : ""}`
      : "none";
    const term = document.querySelector("sa-terminal") as
      | (HTMLElement & { terminalSize(): { cols: number; rows: number } })
      | null;
    const size = term ? term.terminalSize() : { cols: 0, rows: 0 };
    const state = term?.querySelector(".conn-state")?.textContent?.trim() ?? "no terminal";
    const toasts = document.querySelector("sa-toasts")?.textContent?.replace(/\s+/g, " ").trim() ?? "";
    return `focus on ${focus}; terminal ${size.cols}x${size.rows}, "${state}"; toasts: "${toasts}"`;
  });
}

/** Runs `check` (a wait for typed keys to arrive); a failure also says what the page showed then. */
export async function withTypingReport<T>(page: Page, check: () => Promise<T>): Promise<T> {
  try {
    return await check();
  } catch (err) {
    const report = await typingReport(page).catch((e: unknown) => `no report (${String(e)})`);
    throw new Error(`${err instanceof Error ? err.message : String(err)}\nthe page: ${report}`);
  }
}
