import type { Page } from "playwright-core";
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

/** The notifications the page's service worker currently shows. */
export function shownNotifications(page: Page): Promise<Array<{ title: string; body: string; tag: string }>> {
  return page.evaluate(async () => {
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
