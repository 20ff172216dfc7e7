import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { OpenPages, type TestPage } from "../../e2e/support/browser.js";
import { type DashboardFixture, SETUP_TIMEOUT_MS, startDashboard } from "../../e2e/support/dashboard-fixture.js";
import { terminalText, waitForTerminal } from "../../e2e/support/dashboard-page.js";
import { waitFor } from "../../support/wait.js";

const BASH = ["env", "PS1=ready$ ", "bash", "--norc", "--noprofile"];

/** OSC 52 from a pane, in chromium: the first write of a session asks, and the answer is kept. */
describe("a program copying to the clipboard (OSC 52)", () => {
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

  async function open(id: string): Promise<TestPage> {
    await f.sessions.createSession({ parent: "nodes/local", sessionId: id, cwd: f.dir, command: BASH });
    // tmux passes OSC 52 on to its clients (the page) when asked to.
    await f.tmux.run("set-option", "-s", "set-clipboard", "on");
    const v = await pages.add(f.browser);
    await v.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: f.hub.url });
    await f.login(v.page, `/sessions/local/${id}`);
    await waitForTerminal(v.page);
    await v.page.locator("sa-terminal .xterm").click();
    await v.page.evaluate(() => navigator.clipboard.writeText("the person's own clipboard"));
    return v;
  }

  async function copyFromPane(v: TestPage, text: string): Promise<void> {
    await v.page.keyboard.type(String.raw`printf '\033]52;c;%s\a' "$(printf '${text}' | base64)"`);
    await v.page.keyboard.press("Enter");
  }

  const clipboard = (v: TestPage) => v.page.evaluate(() => navigator.clipboard.readText());

  it("asks first, showing the text, and copies nothing of a session the person refused", async () => {
    const v = await open("osc-deny");
    await copyFromPane(v, "rm -rf ~");
    const prompt = v.page.locator("sa-osc52-prompt .osc52-prompt");
    await prompt.waitFor();
    expect(await v.page.locator("sa-osc52-prompt .osc52-text").textContent()).toBe("rm -rf ~");
    expect(await clipboard(v)).toBe("the person's own clipboard");
    await v.page.click("text=Never for this session");
    await prompt.waitFor({ state: "detached" });
    await v.page.locator("sa-terminal .xterm").click();
    await copyFromPane(v, "second try");
    // A marker printed after it: once shown, the page has had the second copy.
    await v.page.keyboard.type("printf 'mark%s\\n' -er");
    await v.page.keyboard.press("Enter");
    await waitFor(async () => (await terminalText(v.page)).includes("mark-er"), "the marker after the second copy");
    expect(await v.page.locator("sa-osc52-prompt .osc52-prompt").count()).toBe(0);
    expect(await clipboard(v)).toBe("the person's own clipboard");
  });

  it("copies once allowed, and then without asking again in that session", async () => {
    const v = await open("osc-allow");
    await copyFromPane(v, "copied by a program");
    await v.page.locator("sa-osc52-prompt .osc52-prompt").waitFor();
    await v.page.click("text=Allow for this session");
    await waitFor(async () => (await clipboard(v)) === "copied by a program", "the text on the clipboard");
    await v.page.locator("sa-terminal .xterm").click();
    await copyFromPane(v, "copied again");
    await waitFor(async () => (await clipboard(v)) === "copied again", "the second text on the clipboard");
    expect(await v.page.locator("sa-osc52-prompt .osc52-prompt").count()).toBe(0);
  });
});
