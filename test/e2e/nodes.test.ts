import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { testToken } from "../foundation/hub-fixture.js";
import { closedPort } from "../support/ports.js";
import { type ServerProcess, startServerProcess } from "../support/servers.js";
import { createTestTmux, type TestTmux } from "../support/tmux.js";
import { waitFor } from "../support/wait.js";
import { OpenPages } from "./support/browser.js";
import { type DashboardFixture, SETUP_TIMEOUT_MS, startDashboard } from "./support/dashboard-fixture.js";
import { sessionRow } from "./support/dashboard-page.js";

/** Whole-test budget: a Node killed and started again while the Hub retries with backoff. */
const TEST_TIMEOUT_MS = 90_000;
/** The Hub retries a lost Node with backoff up to 15 s; the page follows within its own stream. */
const NODE_BACK_TIMEOUT_MS = 30_000;

describe("nodes in the dashboard", () => {
  let nodeTmux: TestTmux;
  let node: ServerProcess | undefined;
  let nodePort = 0;
  let f: DashboardFixture;
  const nodeToken = testToken();
  const pages = new OpenPages();

  const startNode = async () => {
    node = await startServerProcess({
      kind: "node",
      tmuxSocket: nodeTmux.socketName,
      token: nodeToken,
      args: ["--name", "w1", ...(nodePort ? ["--port", String(nodePort)] : [])],
    });
    nodePort = Number(new URL(node.url).port);
    return node;
  };

  beforeAll(async () => {
    nodeTmux = createTestTmux();
    await nodeTmux.run("new-session", "-d", "-s", "remote-one", "sleep 600");
    const started = await startNode();
    f = await startDashboard({
      hubArgs: ["--node", `w1=${started.url}`],
      env: { STARAGENT_NODE_TOKEN: nodeToken },
    });
  }, SETUP_TIMEOUT_MS);

  afterEach(async () => {
    expect(await pages.closeAll()).toEqual([]);
  });

  afterAll(async () => {
    await f?.close();
    await node?.stop();
    await nodeTmux?.close();
    if (node) await rm(node.home, { recursive: true, force: true });
  }, SETUP_TIMEOUT_MS);

  it(
    "shows a killed Node's sessions as unreachable, with a banner, and brings them back when it returns",
    async () => {
      const v = await pages.add(f.browser);
      await f.login(v.page);
      const row = sessionRow(v.page, "nodes/w1/sessions/remote-one");
      await row.waitFor();
      expect(
        await v.page.locator('sa-session-list .row-node[data-key="node:w1"] .connectivity').textContent(),
      ).toContain("online");
      expect(await row.locator(".tag-offline").count()).toBe(0);

      node?.process.kill("SIGKILL");
      await waitFor(() => node?.process.exitCode !== null || node?.process.signalCode !== null, "the Node to die");
      await row.locator(".tag-offline").waitFor({ timeout: 15_000 });
      await v.page.locator("sa-banner .banner-node", { hasText: "Node w1 cannot be reached" }).waitFor();
      expect(
        await v.page.locator('sa-session-list .row-node[data-key="node:w1"] .connectivity').textContent(),
      ).toContain("unreachable");

      const previousHome = node?.home;
      await startNode();
      if (previousHome) await rm(previousHome, { recursive: true, force: true });
      await row.locator(".tag-offline").waitFor({ state: "detached", timeout: NODE_BACK_TIMEOUT_MS });
      await v.page.locator("sa-banner .banner-node").waitFor({ state: "detached" });
      await waitFor(
        async () =>
          (
            (await v.page.locator('sa-session-list .row-node[data-key="node:w1"] .connectivity').textContent()) ?? ""
          ).includes("online"),
        "w1 to show online again",
        NODE_BACK_TIMEOUT_MS,
      );
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "adds a node from the nodes page (refusing bad input with a sentence) and removes it",
    async () => {
      const v = await pages.add(f.browser);
      await f.login(v.page, "/nodes");
      await v.page.locator("sa-node-list .node-card").nth(1).waitFor();
      const form = v.page.locator("sa-node-list form.add-node");
      await form.locator("#node-id").fill("Not Valid");
      await form.getByLabel("URL").fill("http://127.0.0.1:1");
      await form.getByLabel("Node token").fill("t0ken");
      await form.locator("button[type=submit]").click();
      await expect
        .poll(() => form.locator(".form-error").textContent())
        .toMatch(/^The node name "Not Valid" is not valid/);

      // An address that leads nowhere is refused with one sentence; ticked, it is added all the same.
      const port = await closedPort();
      await form.locator("#node-id").fill("spare");
      await form.getByLabel("URL").fill(`http://127.0.0.1:${port}`);
      await form.locator("button[type=submit]").click();
      await expect
        .poll(() => form.locator(".form-error").textContent())
        .toMatch(new RegExp(`^Node spare cannot be reached at http://127\\.0\\.0\\.1:${port} \\(`));
      // The way to add it all the same is the form's checkbox, not the command line's --force.
      const refusal = (await form.locator(".form-error").textContent()) ?? "";
      expect(refusal).toMatch(
        / To add it all the same and fix it later, tick "Add even if the Node does not answer or refuses the token" below\.$/,
      );
      expect(refusal).not.toContain("--force");
      await form.getByLabel("Add even if the Node does not answer").check();
      await form.locator("button[type=submit]").click();
      const card = v.page.locator("sa-node-list .node-card", { hasText: "spare" });
      await card.waitFor();
      expect(await card.locator("dd.mono").textContent()).toBe(`http://127.0.0.1:${port}`);

      // Edited in place: the new URL is checked the same way, and saved when ticked.
      const moved = await closedPort();
      await card.getByRole("button", { name: "Edit node spare" }).click();
      const dialog = v.page.locator("sa-node-edit dialog");
      expect(await dialog.getByLabel("URL").inputValue()).toBe(`http://127.0.0.1:${port}`);
      await dialog.getByLabel("URL").fill(`http://127.0.0.1:${moved}`);
      await dialog.getByRole("button", { name: "Save" }).click();
      await expect.poll(() => dialog.locator(".form-error").textContent()).toMatch(/^Node spare cannot be reached/);
      const edited = (await dialog.locator(".form-error").textContent()) ?? "";
      expect(edited).toMatch(/, tick "Save even if the Node does not answer or refuses the token" below\.$/);
      expect(edited).not.toContain("--force");
      await dialog.getByLabel("Save even if the Node does not answer").check();
      await dialog.getByRole("button", { name: "Save" }).click();
      await dialog.waitFor({ state: "hidden" });
      await expect.poll(() => card.locator("dd.mono").textContent()).toBe(`http://127.0.0.1:${moved}`);
      await card.getByRole("button", { name: "Remove node spare" }).click();
      await v.page.locator("sa-node-list .remove-dialog button.danger").click();
      await card.waitFor({ state: "detached" });
      expect(await v.page.locator("sa-node-list .node-card").count()).toBe(2);
    },
    TEST_TIMEOUT_MS,
  );
  it(
    "offers in the create dialog only the recent folders used on the node chosen",
    async () => {
      const v = await pages.add(f.browser);
      await f.login(v.page);
      const folder = join(f.dir, "recent-here");
      await mkdir(folder);
      await v.page.click("button:has-text('New session')");
      const dialog = v.page.locator("sa-create-dialog dialog");
      await dialog.locator("#create-node").selectOption("local");
      await dialog.getByLabel("Name").fill("recent-local");
      await dialog.getByLabel("Folder").fill(folder);
      await dialog.getByLabel("A shell").check();
      await dialog.locator("button:has-text('Start session')").click();
      await v.page.waitForURL((u) => u.pathname === "/sessions/local/recent-local");
      try {
        await v.page.click("button:has-text('New session')");
        const recent = dialog.locator(`.recent-folder[title="${folder}"]`);
        await recent.waitFor();
        // The folder is a path on this machine: on w1 it is not offered (it may not exist there).
        await dialog.locator("#create-node").selectOption("w1");
        await expect.poll(() => recent.count()).toBe(0);
        await dialog.locator("#create-node").selectOption("local");
        await recent.waitFor();
        await dialog.locator("button:has-text('Cancel')").click();
      } finally {
        await f.sessions.stopSession({ name: "nodes/local/sessions/recent-local", force: true });
      }
    },
    TEST_TIMEOUT_MS,
  );
});
