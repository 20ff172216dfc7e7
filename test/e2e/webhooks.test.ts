import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DeliveryOutcome,
  NotificationKind,
  NotificationService,
  WebhookFormat,
} from "../../gen/staragent/v1/notification_service_pb.js";
import { grpcClient } from "../foundation/hub-fixture.js";
import { axeViolations } from "./support/axe.js";
import { DESKTOP, PHONE } from "./support/browser.js";
import { dashboardSuite } from "./support/dashboard-suite.js";

/** A webhook receiver on loopback: `/ok` accepts, `/down` answers 500. */
class Receiver {
  readonly paths: string[] = [];
  private readonly server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      this.paths.push(req.url ?? "");
      if (req.url === "/down") res.writeHead(500).end("receiver down");
      else res.writeHead(200).end("ok");
    });
  });
  url = "";

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/**
 * The webhooks in the dashboard's settings, on desktop and phone: each listed with its format, where
 * it posts, its filters and its newest delivery; Test sends one through the Hub and says how it went;
 * Remove takes a second click, then the Hub forgets it. Adding is shown as the command to run.
 */
describe.each([
  ["desktop", DESKTOP],
  ["phone", PHONE],
])("webhooks in the settings (%s)", (screen, viewport) => {
  const suite = dashboardSuite();
  const receiver = new Receiver();
  const notifications = () => grpcClient(NotificationService, suite.f.hub.url, suite.f.hub.token);

  beforeAll(async () => {
    await receiver.start();
  });

  afterAll(async () => {
    await receiver.close();
  });

  it("lists them with their last delivery, tests one, and removes one after a second click", async () => {
    const { f, pages } = suite;
    await notifications().addWebhook({
      webhookId: "team-chat",
      url: `${receiver.url}/ok`,
      format: WebhookFormat.GENERIC,
      sessionPattern: "fix-*",
      kinds: [NotificationKind.PROMPT],
    });
    await notifications().addWebhook({ webhookId: "pager", url: `${receiver.url}/down`, format: WebhookFormat.NTFY });
    const first = await notifications().testNotification({ target: "webhooks/team-chat" });
    expect(first.delivery?.outcome).toBe(DeliveryOutcome.DELIVERED);

    const { page } = await pages.add(f.browser, viewport);
    await f.login(page, "/");
    await page.click("details.menu > summary");
    await page.getByRole("button", { name: "Webhooks (chat apps, ntfy)…" }).click();
    const dialog = page.getByRole("dialog", { name: "Webhooks" });
    await dialog.waitFor();
    const chat = dialog.locator('li[data-webhook="team-chat"]');
    const pager = dialog.locator('li[data-webhook="pager"]');
    await expect.poll(() => chat.textContent()).toContain("Last: delivered (HTTP 200), just now");
    const chatText = (await chat.textContent()) ?? "";
    expect(chatText).toContain("generic");
    expect(chatText).toContain(`${receiver.url}/ok`);
    expect(chatText).toContain("Only sessions fix-*, prompts");
    const pagerText = (await pager.textContent()) ?? "";
    expect(pagerText).toContain("ntfy");
    expect(pagerText).toContain("Every session, prompts and finished turns");
    expect(pagerText).toContain("Nothing sent yet.");
    // Adding is on the command line, the exact command shown (the CLI's own usage line).
    expect(await dialog.locator(".add-command").textContent()).toBe(
      "staragent notify add NAME --url URL --format generic|ntfy|slack|discord|telegram|lark [--secret-file FILE]",
    );
    expect(await axeViolations(page)).toEqual([]);

    // Test: the Hub sends it now and the dialog says how it went, the receiver's answer included.
    await pager.getByRole("button", { name: "Test pager" }).click();
    await expect
      .poll(() => pager.textContent())
      .toContain("Test: failed (HTTP 500): 500 Internal Server Error: receiver down");
    await expect.poll(() => pager.locator(".webhook-last").textContent()).toMatch(/^Last: failed \(HTTP 500\)/);
    expect(receiver.paths.filter((p) => p === "/down")).toHaveLength(1);

    // Remove: the first click only asks; the second removes it on the Hub.
    await pager.getByRole("button", { name: "Remove pager" }).click();
    expect((await notifications().listWebhooks({})).webhooks.map((w) => w.name)).toEqual([
      "webhooks/pager",
      "webhooks/team-chat",
    ]);
    await pager.getByRole("button", { name: "Really remove pager" }).click();
    await pager.waitFor({ state: "detached" });
    expect((await notifications().listWebhooks({})).webhooks.map((w) => w.name)).toEqual(["webhooks/team-chat"]);
    await chat.waitFor();

    // Everything in the dialog fits the screen's width (no sideways scrolling on a phone).
    const overflow = await dialog.evaluate((d) => d.scrollWidth - d.clientWidth);
    expect(overflow, `${screen}: the dialog scrolls sideways`).toBeLessThanOrEqual(0);
    await dialog.getByRole("button", { name: "Done" }).click();
    await notifications().removeWebhook({ name: "webhooks/team-chat" });
  }, 60_000);
});
