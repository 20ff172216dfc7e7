import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { BrowserContextOptions } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { git } from "../support/git.js";
import { waitFor } from "../support/wait.js";
import { axeViolations } from "./support/axe.js";
import { DESKTOP, OpenPages, PHONE } from "./support/browser.js";
import { type DashboardFixture, SETUP_TIMEOUT_MS, startDashboard, tmuxSession } from "./support/dashboard-fixture.js";
import { sessionRow } from "./support/dashboard-page.js";

/** Whole-test budget: a browser page and a few calls on a busy 2-core machine. */
const TEST_TIMEOUT_MS = 60_000;
/** A changed file whose path is wider than the Changes list's column (on a desktop and on a phone). */
const LONG_DIR = "applications/desktop-entries";
const LONG_FILE = "staragent-claude-code-url-handler-for-the-desktop.ts";

describe("the Changes and Files tabs against a real Hub and a real git repository", () => {
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

  for (const [layout, options, diffClass] of [
    ["desktop", DESKTOP, "diff-split"],
    ["phone", PHONE, "diff-unified"],
  ] as Array<[string, BrowserContextOptions, string]>) {
    it(
      `shows the file an agent changed, its added line in the diff, and the file's text in the browser (${layout})`,
      async () => {
        const id = `ws-${layout}`;
        const repo = join(f.dir, id);
        await mkdir(repo);
        git(repo, "init", "-q", "-b", "main");
        await writeFile(join(repo, "notes.ts"), "export const notes = 1;\n");
        // A path longer than the list's column is wide: its row must wrap it, not spill out of the column.
        await mkdir(join(repo, LONG_DIR), { recursive: true });
        await writeFile(join(repo, LONG_DIR, LONG_FILE), "export const long = 1;\n");
        git(repo, "add", ".");
        git(repo, "commit", "-qm", "first");
        // The "agent": a program in the session that edits a file of its folder, then waits.
        await tmuxSession(
          f.tmux,
          id,
          repo,
          "sh",
          "-c",
          `printf 'export const added = 2;\\n' >> notes.ts; echo changed >> ${LONG_DIR}/${LONG_FILE}; exec sleep 600`,
        );
        const name = `nodes/local/sessions/${id}`;
        await waitFor(
          async () => (await f.sessions.getSession({ name })).session?.changedFiles === 2,
          "the Hub to count the changed files",
        );
        const { page } = await pages.add(f.browser, options);
        await f.login(page, `/sessions/local/${id}/changes`);
        await page.locator("sa-changes-view .changes-branch", { hasText: "main" }).waitFor();
        await page.locator("sa-changes-view .change-file", { hasText: LONG_FILE }).waitFor();
        // Every row's path fits inside its row, and every row inside the list's column.
        const spilled = await page
          .locator("sa-changes-view .changes-group")
          .first()
          .evaluate((group) => {
            const column = group.getBoundingClientRect();
            return [...group.querySelectorAll(".change-file")]
              .filter((row) => {
                const r = row.getBoundingClientRect();
                return r.left < column.left - 1 || r.right > column.right + 1 || row.scrollWidth > row.clientWidth + 1;
              })
              .map((row) => row.textContent);
          });
        expect(spilled).toEqual([]);
        await page.locator("sa-changes-view .change-file", { hasText: "notes.ts" }).click();
        const added = page.locator(`sa-changes-view table.${diffClass} td.diff-add`, {
          hasText: "export const added = 2;",
        });
        await added.waitFor();
        // Highlighted by highlight.js: the keyword is marked up.
        expect(await added.locator(".hljs-keyword").first().textContent()).toBe("export");
        expect(await axeViolations(page)).toEqual([]);

        await page.locator("sa-session-view nav.tabs a", { hasText: "Files" }).click();
        await page.locator("sa-files-view .file-entry", { hasText: "notes.ts" }).click();
        await page.locator("sa-files-view .preview-text", { hasText: "export const added = 2;" }).waitFor();
        expect(await page.locator("sa-files-view .preview-text").textContent()).toBe(
          "export const notes = 1;\nexport const added = 2;\n\n",
        );
        expect(await axeViolations(page)).toEqual([]);

        // The list's row shows the count.
        await page.goto(`${f.hub.url}/`);
        await sessionRow(page, name).locator(".row-changes", { hasText: "2 changed" }).waitFor();
        await f.tmux.run("kill-session", "-t", `=${id}`);
      },
      TEST_TIMEOUT_MS,
    );
  }
});
