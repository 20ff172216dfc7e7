import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { OpenPages } from "../../e2e/support/browser.js";
import {
  type DashboardFixture,
  SETUP_TIMEOUT_MS,
  startDashboard,
  tmuxSession,
} from "../../e2e/support/dashboard-fixture.js";
import { waitFor } from "../../support/wait.js";

/** A right-to-left override: `report\u202etxt.exe` reads as `reportexe.txt`. */
const RLO = "\u202e";

describe("bidi controls in names the dashboard shows", () => {
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

  it("shows a session's name and folder with their bidi controls as visible escapes", async () => {
    const dir = join(f.dir, `report${RLO}fdp.exe`);
    await mkdir(dir);
    await tmuxSession(f.tmux, `notes${RLO}txt-sh`, dir, "sleep", "600");
    const { page: p } = await pages.add(f.browser);
    await f.login(p);
    const name = p.locator("sa-session-list .row-name", { hasText: "notes" });
    await name.waitFor();
    expect(await name.textContent()).toBe("notes\\u202etxt-sh");
    const cwd = p.locator("sa-session-list .row-cwd", { hasText: "report" });
    expect(await cwd.textContent()).toContain("report\\u202efdp.exe");
    const shown = await p.locator("sa-session-list").textContent();
    expect(shown).not.toContain(RLO);
  });

  it("shows bidi controls and hidden tag characters in chat messages as visible escapes", async () => {
    const name = "nodes/local/sessions/hidden-chat";
    await f.sessions.createSession({
      parent: "nodes/local",
      sessionId: "hidden-chat",
      cwd: f.dir,
      command: ["claude"],
    });
    await waitFor(
      async () => (await f.tmux.run("capture-pane", "-p", "-t", "=hidden-chat:")).includes("? for shortcuts"),
      "the claude stand-in's input box",
    );
    // "Hi" in tag characters: invisible in a browser, yet there for anyone reading the text.
    const text = `look at ${RLO}exe.txt\u{e0048}\u{e0069} now`;
    await f.sessions.sendChatMessage({ name, text });
    await waitFor(
      async () => (await f.sessions.getChat({ name })).messages.some((m) => m.text === `Done: ${text}`),
      "the stand-in's answer",
    );
    const { page: p } = await pages.add(f.browser);
    await f.login(p, "/sessions/local/hidden-chat/chat");
    const escaped = "look at \\u202eexe.txt\\u{e0048}\\u{e0069} now";
    const mine = p.locator("sa-chat-view .msg-user .msg-text", { hasText: "look at" });
    await mine.waitFor();
    expect(await mine.textContent()).toBe(escaped);
    const answer = p.locator("sa-chat-view .msg-assistant .msg-text", { hasText: "Done:" });
    await answer.waitFor();
    // The answer is rendered as Markdown (a paragraph and its line break).
    expect((await answer.textContent())?.trim()).toBe(`Done: ${escaped}`);
    const shown = (await p.locator("sa-chat-view").textContent()) ?? "";
    expect(shown).not.toMatch(/[\u202e\u{e0000}-\u{e007f}]/u);
  });
});
