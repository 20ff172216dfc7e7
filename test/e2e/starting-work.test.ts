import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Locator } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ChatRole, SessionStatus, StatusReason } from "../../gen/staragent/v1/session_pb.js";
import { git } from "../support/git.js";
import { waitFor } from "../support/wait.js";
import { axeViolations } from "./support/axe.js";
import { DESKTOP, OpenPages, PHONE } from "./support/browser.js";
import { type DashboardFixture, SETUP_TIMEOUT_MS, startDashboard } from "./support/dashboard-fixture.js";

/** Whole-test budget: a browser page, a few sessions and turns on a busy 2-core machine. */
const TEST_TIMEOUT_MS = 90_000;
/** How long the stand-in's turn runs once its approval is answered. */
const TURN_MS = 1_000;
/** How long that turn and the queued message's turn may take to end on a busy 2-core machine. */
const TURNS_END_TIMEOUT_MS = 20_000;
/** The queue test's first prompt: the stand-in asks to run a command and waits for the answer. */
const FIRST_PROMPT = "first task, approve it";

/**
 * The create dialog and the composer's queue in chromium against a real Hub: the folder picker over
 * ListDirectories and CreateDirectory, a session on a new git worktree, a resumed conversation picked
 * from ListConversations, and a message queued with "send when idle" that arrives when the turn ends.
 */
describe("starting and continuing work from the dashboard", () => {
  let f: DashboardFixture;
  const pages = new OpenPages();
  const userTurns = async (session: string) =>
    (await f.sessions.getChat({ name: `nodes/local/sessions/${session}` })).messages
      .filter((m) => m.role === ChatRole.USER)
      .map((m) => m.text);

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
    "clears a refused start's folder error once the folder is made",
    async () => {
      const later = join(f.dir, "made-later");
      const { page } = await pages.add(f.browser, DESKTOP);
      await f.login(page);
      await page.click("button:has-text('New session')");
      const dialog = page.locator("sa-create-dialog dialog");
      await dialog.locator("#create-name").fill("made-later");
      await dialog.getByLabel("A shell").check();
      await dialog.locator("#create-cwd").fill(later);
      await dialog.locator("#create-name").press("Enter");
      await dialog
        .locator(".form-error", { hasText: /^The folder ".*made-later" is not an existing directory/ })
        .waitFor();
      await dialog.locator("#create-cwd").fill(`${f.dir}/`);
      // Exactly that folder listed (the home folder inside it is shown first, and its path contains it).
      const exactly = (path: string) => new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`);
      await dialog
        .locator(".picker-path")
        .filter({ hasText: exactly(f.dir) })
        .waitFor();
      await dialog.locator("#create-newdir").fill("made-later");
      await dialog.locator("button:has-text('Make it')").click();
      await dialog
        .locator(".picker-path")
        .filter({ hasText: exactly(later) })
        .waitFor();
      expect(await dialog.locator(".form-error").count()).toBe(0);
      await page.keyboard.press("Escape");
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "on a phone: shows a refused start's error in sight, and starts in the home folder when the folder is left empty",
    async () => {
      const { page } = await pages.add(f.browser, PHONE);
      await f.login(page);
      await page.click("button:has-text('New session')");
      const dialog = page.locator("sa-create-dialog dialog");
      await dialog.locator("#create-name").fill("phone-home");
      await dialog.getByLabel("A shell").check();
      await dialog.locator("#create-cwd").fill(join(f.dir, "not-there"));
      // Pressed at the bottom of the form, as a phone's thumb does; the refusal stands at its top.
      const create = dialog.locator("button[type=submit]");
      await create.scrollIntoViewIfNeeded();
      await create.click();
      const error = dialog.locator(".form-error", {
        hasText: /^The folder ".*not-there" is not an existing directory/,
      });
      await error.waitFor();
      await expect.poll(() => inView(error), { timeout: 5_000 }).toBe(true);

      await dialog.locator("#create-cwd").fill("");
      await create.scrollIntoViewIfNeeded();
      await create.click();
      await page.waitForURL((u) => u.pathname === "/sessions/local/phone-home");
      await waitFor(
        async () => (await f.sessions.getSession({ name: "nodes/local/sessions/phone-home" })).session?.cwd,
        "phone-home's folder",
      ).then((cwd) => expect(cwd).toBe(join(f.dir, "home")));
      await f.sessions.stopSession({ name: "nodes/local/sessions/phone-home" });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "picks a folder by browsing (making a new one), starts on a new worktree, and types a queued message once the turn ends",
    async () => {
      const projects = join(f.dir, "projects");
      const repo = join(projects, "app");
      await mkdir(repo, { recursive: true });
      git(repo, "init", "-q", "-b", "main");
      await writeFile(join(repo, "README.md"), "app\n");
      git(repo, "add", ".");
      git(repo, "commit", "-qm", "first");

      const { page } = await pages.add(f.browser, DESKTOP);
      await f.login(page);
      await page.click("button:has-text('New session')");
      const dialog = page.locator("sa-create-dialog dialog");
      await dialog.locator("#create-name").fill("wt-agent");
      const folder = dialog.locator("#create-cwd");
      // Type-ahead: the folder the typed path is in is listed, filtered by the name being typed.
      await folder.fill(`${f.dir}/proj`);
      const entries = dialog.locator(".picker-entry .picker-name");
      await expect.poll(() => entries.allTextContents()).toEqual(["projects"]);
      await entries.click();
      await dialog.locator(".picker-path", { hasText: projects }).waitFor();
      expect(await folder.inputValue()).toBe(projects);
      // The path is drawn in its own order (its start cut off when it is long): the leading "/" is leftmost.
      expect(await leadingSlashLeftmost(page)).toBe(true);
      await dialog.locator(".picker-entry", { hasText: "app" }).locator(".git-badge", { hasText: "main" }).waitFor();

      // A new folder, made on the node, and the picker goes into it.
      await dialog.locator("#create-newdir").fill("scratch");
      await dialog.locator("button:has-text('Make it')").click();
      await dialog.locator(".picker-path", { hasText: join(projects, "scratch") }).waitFor();
      expect((await stat(join(projects, "scratch"))).isDirectory()).toBe(true);
      expect(await folder.inputValue()).toBe(join(projects, "scratch"));
      // Making it again is refused with the node's reason, and nothing changes.
      await dialog.locator(".picker-up").click();
      await dialog.locator(".picker-path", { hasText: projects }).waitFor();
      await dialog.locator("#create-newdir").fill("scratch");
      await dialog.locator("button:has-text('Make it')").click();
      await dialog.locator(".picker-error", { hasText: /exists/ }).waitFor();

      await dialog.locator(".picker-entry", { hasText: "app" }).click();
      await dialog.locator(".picker-path", { hasText: repo }).waitFor();
      await dialog.getByLabel("Your own command").check();
      await dialog.locator("#create-command").fill(`env STANDIN_TURN_MS=${TURN_MS} claude`);
      await dialog.getByLabel("On a new git worktree").check();
      // The branch is suggested from the session's name.
      expect(await dialog.locator("#create-branch").inputValue()).toBe("wt-agent");
      expect(await axeViolations(page)).toEqual([]);
      await dialog.locator("button:has-text('Start session')").click();
      await page.waitForURL((u) => u.pathname === "/sessions/local/wt-agent");

      const name = "nodes/local/sessions/wt-agent";
      const created = (await f.sessions.getSession({ name })).session;
      const worktree = join(projects, "app-wt-agent");
      expect(created?.worktree).toMatchObject({ branch: "wt-agent", path: worktree, repositoryRoot: repo });
      expect(created?.cwd).toBe(worktree);
      expect(git(worktree, "branch", "--show-current").trim()).toBe("wt-agent");
      await waitFor(async () => (await f.sessions.getSession({ name })).session?.cli === 1, "the stand-in to start");

      // A turn runs, held on its approval prompt as long as the test needs; a message queued meanwhile
      // waits for the turn's end, one cancelled is never typed.
      await page.goto(`${f.hub.url}/sessions/local/wt-agent/chat`);
      const composer = page.locator("sa-chat-composer");
      await composer.locator("#composer-text").fill(FIRST_PROMPT);
      await composer.locator("button:has-text('Send')").click();
      const asking = async () => {
        const s = (await f.sessions.getSession({ name })).session;
        return s?.status === SessionStatus.REVIEW && s.statusReason === StatusReason.INPUT_PROMPT;
      };
      await waitFor(asking, "the first turn to ask for its approval");
      await composer.getByLabel("Send when idle").check();
      await composer.locator("#composer-text").fill("after the first");
      await composer.locator("button:has-text('Queue')").click();
      await composer.locator(".composer-status", { hasText: "Queued" }).waitFor();
      await composer.locator("#composer-text").fill("never this one");
      await composer.locator("button:has-text('Queue')").click();
      const queue = page.locator("sa-chat-queue .queued");
      await expect
        .poll(() => queue.locator(".queued-text").allInnerTexts())
        .toEqual(["after the first", "never this one"]);
      await queue.filter({ hasText: "never this one" }).locator("button.queued-cancel").click();
      await expect.poll(() => queue.locator(".queued-text").allInnerTexts()).toEqual(["after the first"]);
      // Still the first turn, on its prompt: nothing queued was typed during it.
      expect(await asking()).toBe(true);
      expect(await userTurns("wt-agent")).toEqual([FIRST_PROMPT]);
      expect(await axeViolations(page)).toEqual([]);

      // The person approves in the terminal; the turn goes on and ends, and only then is the message typed.
      await f.tmux.run("send-keys", "-t", "=wt-agent:", "y");
      await page.locator("sa-chat-view .msg-user .msg-text", { hasText: "after the first" }).waitFor({
        timeout: TURNS_END_TIMEOUT_MS,
      });
      await queue.first().waitFor({ state: "detached" });
      await waitFor(
        async () => (await f.sessions.getSession({ name })).session?.status !== SessionStatus.WORKING,
        "the queued message's turn to end",
        TURNS_END_TIMEOUT_MS,
      );
      expect(await userTurns("wt-agent")).toEqual([FIRST_PROMPT, "after the first"]);
      expect((await f.sessions.getSession({ name })).session?.queuedMessages).toBe(0);

      // The session view names the worktree's branch; Stop offers to remove the worktree, which the node
      // refuses while it holds uncommitted work (the session keeps running), then does once it is clean.
      await page.locator("sa-session-view .session-worktree", { hasText: "worktree · wt-agent" }).waitFor();
      await writeFile(join(worktree, "draft.txt"), "not committed\n");
      await page.click("sa-session-view .stop-button");
      const stop = page.locator("sa-stop-dialog dialog");
      await stop.getByLabel(/Also remove its git worktree/).check();
      expect(await axeViolations(page)).toEqual([]);
      await stop.locator("button.danger").click();
      await stop.locator(".form-error", { hasText: /draft\.txt|uncommitted|untracked/ }).waitFor();
      expect((await f.sessions.getSession({ name })).session?.name).toBe(name);
      expect(await readFile(join(worktree, "draft.txt"), "utf8")).toBe("not committed\n");
      await rm(join(worktree, "draft.txt"));
      await stop.locator("button.danger").click();
      await page.waitForURL((u) => u.pathname === "/");
      await waitFor(async () => !(await stat(worktree).catch(() => undefined)), "the worktree to be removed");
      expect(git(repo, "branch", "--list", "wt-agent").trim()).toBe("wt-agent");
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "resumes a past conversation picked from the folder's list, newest first and searchable",
    async () => {
      const folder = join(f.dir, "talks");
      await mkdir(folder);
      // Two past Claude Code conversations (stand-in), the second newer.
      for (const [session, prompt] of [
        ["talk-old", "remember the blue door"],
        ["talk-new", "remember the red window"],
      ] as const) {
        const name = `nodes/local/sessions/${session}`;
        await f.sessions.createSession({ parent: "nodes/local", sessionId: session, cwd: folder, command: ["claude"] });
        await waitFor(
          async () => (await f.sessions.getSession({ name })).session?.status === SessionStatus.IDLE,
          `${session} to start`,
        );
        await f.sessions.sendChatMessage({ name, text: prompt });
        await waitFor(
          async () =>
            (await userTurns(session)).includes(prompt) &&
            (await f.sessions.getSession({ name })).session?.status !== SessionStatus.WORKING,
          `${session}'s turn`,
        );
        await f.sessions.stopSession({ name });
      }

      const { page } = await pages.add(f.browser, DESKTOP);
      await f.login(page);
      await page.click("button:has-text('New session')");
      const dialog = page.locator("sa-create-dialog dialog");
      await dialog.locator("#create-name").fill("talk-again");
      await dialog.locator("#create-cwd").fill(folder);
      await dialog.locator("label.preset", { hasText: "Claude Code" }).locator("input").check();
      await dialog.getByLabel("Resume a past Claude Code conversation").check();
      const firsts = dialog.locator(".conversation-first");
      await expect.poll(() => firsts.allInnerTexts()).toEqual(["remember the red window", "remember the blue door"]);
      const search = dialog.getByLabel("Search conversations");
      await search.fill("purple");
      await dialog.locator(".conversation-list", { hasText: "No conversation matches the search." }).waitFor();
      await search.fill("BLUE door");
      await expect.poll(() => firsts.allInnerTexts()).toEqual(["remember the blue door"]);
      // Starting without a choice is refused in the dialog.
      await dialog.locator("button:has-text('Start session')").click();
      await dialog.locator(".form-error", { hasText: "Pick the conversation to resume" }).waitFor();
      await dialog.locator(".conversation", { hasText: "remember the blue door" }).locator("input").check();
      expect(await axeViolations(page)).toEqual([]);
      await dialog.locator("button:has-text('Start session')").click();
      await page.waitForURL((u) => u.pathname === "/sessions/local/talk-again");
      // No turn in this run yet, but the conversation has turns: the header does not say it has none.
      await expect
        .poll(() => page.locator("sa-session-view .session-reason").textContent(), { timeout: 10_000 })
        .toBe("No new turn since it started (earlier turns are in Chat)");

      // The resumed session's chat holds the old turn.
      await page.goto(`${f.hub.url}/sessions/local/talk-again/chat`);
      await page.locator("sa-chat-view .msg-user .msg-text", { hasText: "remember the blue door" }).waitFor();
      expect(await userTurns("talk-again")).toEqual(["remember the blue door"]);
      await f.sessions.stopSession({ name: "nodes/local/sessions/talk-again" });
    },
    TEST_TIMEOUT_MS,
  );
});

/** True when the create dialog's picker path draws its first character (a "/") left of its second. */
function leadingSlashLeftmost(page: import("playwright-core").Page): Promise<boolean> {
  return page.evaluate(() => {
    const path = document.querySelector("sa-create-dialog .picker-path");
    const text = path ? document.createTreeWalker(path, NodeFilter.SHOW_TEXT).nextNode() : null;
    if (!text?.textContent?.startsWith("/")) return false;
    const box = (from: number) => {
      const range = document.createRange();
      range.setStart(text, from);
      range.setEnd(text, from + 1);
      return range.getBoundingClientRect();
    };
    return box(0).left < box(1).left;
  });
}

/** True when the element's box lies wholly inside the viewport. */
async function inView(locator: Locator): Promise<boolean> {
  return locator.evaluate((el) => {
    const r = el.getBoundingClientRect();
    return r.top >= 0 && r.left >= 0 && r.bottom <= window.innerHeight && r.right <= window.innerWidth;
  });
}
