import { rm } from "node:fs/promises";
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
      await expect.poll(() => form.locator(".form-error").textContent()).toMatch(/^node_id: "Not Valid" is not valid/);

      const port = await closedPort();
      await form.locator("#node-id").fill("spare");
      await form.getByLabel("URL").fill(`http://127.0.0.1:${port}`);
      await form.locator("button[type=submit]").click();
      const card = v.page.locator("sa-node-list .node-card", { hasText: "spare" });
      await card.waitFor();
      expect(await card.locator("dd.mono").textContent()).toBe(`http://127.0.0.1:${port}`);
      await card.getByRole("button", { name: "Remove node spare" }).click();
      await v.page.locator("sa-node-list .remove-dialog button.danger").click();
      await card.waitFor({ state: "detached" });
      expect(await v.page.locator("sa-node-list .node-card").count()).toBe(2);
    },
    TEST_TIMEOUT_MS,
  );
});
