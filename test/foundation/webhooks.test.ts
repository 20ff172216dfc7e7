import { createHmac } from "node:crypto";
import { stat, writeFile } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeliveryOutcome, NotificationService } from "../../gen/staragent/v1/notification_service_pb.js";
import { StatusReason } from "../../gen/staragent/v1/session_pb.js";
import { runCli, runCliWithInput } from "../support/servers.js";
import { STAND_INS } from "../support/stand-in-env.js";
import { waitFor } from "../support/wait.js";
import { grpcClient, type HubFixture, startHubFixture } from "./hub-fixture.js";

/** One request a receiver got. */
interface Received {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly at: number;
}

/**
 * Chat apps' webhook endpoints on loopback: each path answers as its service does (Telegram and Lark
 * with a JSON verdict), `/failing` with 500s, and `/hanging` never answers (until the test ends).
 */
class Receiver {
  readonly received: Received[] = [];
  private server: Server | undefined;
  private readonly held: ServerResponse[] = [];
  url = "";

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const path = req.url ?? "";
        this.received.push({
          path,
          headers: req.headers,
          body: Buffer.concat(chunks).toString(),
          at: performance.now(),
        });
        if (path === "/hanging") {
          this.held.push(res);
          return;
        }
        if (path === "/failing") {
          res.writeHead(500).end("receiver down");
          return;
        }
        if (path.startsWith("/bot")) {
          res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true,"result":{}}');
          return;
        }
        if (path === "/lark") {
          res.writeHead(200, { "content-type": "application/json" }).end('{"code":0,"msg":"success"}');
          return;
        }
        res.writeHead(path === "/discord" ? 204 : 200).end(path === "/discord" ? undefined : "ok");
      });
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const res of this.held) res.destroy();
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  to(path: string, session: string): Received[] {
    // ntfy's body is the summary alone: its title header names the session.
    return this.received.filter(
      (r) => r.path === path && (r.body.includes(session) || String(r.headers.title ?? "").includes(session)),
    );
  }
}

/**
 * Webhooks end to end: a Hub process with stand-in CLIs, webhooks added with `staragent notify add`
 * (secrets from a file or stdin), one per format, each POSTing to a local receiver; a receiver that
 * fails is retried and logged, and one that never answers holds up nothing else.
 */
describe("webhooks from the Hub, one per format", () => {
  let f: HubFixture;
  const receiver = new Receiver();
  const notifications = () => grpcClient(NotificationService, f.hub.url, f.hub.token);

  async function agentInReview(id: string, prompt = "please approve"): Promise<string> {
    const name = `nodes/local/sessions/${id}`;
    await f.sessions.createSession({ parent: "nodes/local", sessionId: id, cwd: f.dir, command: ["claude"] });
    await waitFor(
      async () => (await f.sessions.getSession({ name })).session?.statusReason === StatusReason.NO_TURN,
      `${id} idle`,
      20_000,
    );
    await f.sessions.sendChatMessage({ name, text: prompt });
    return name;
  }

  async function notify(args: string[], input?: string): Promise<string> {
    const result =
      input === undefined
        ? await runCli(["notify", ...args], f.cliEnv)
        : await runCliWithInput(["notify", ...args], f.cliEnv, input);
    if (result.code !== 0)
      throw new Error(`staragent notify ${args.join(" ")} failed (${result.code}): ${result.stderr}${result.stdout}`);
    return result.stdout;
  }

  beforeAll(async () => {
    await receiver.start();
    f = await startHubFixture({
      env: {
        PATH: `${STAND_INS}:${process.env.PATH}`,
        STANDIN_THINK_MS: "50",
        STANDIN_TURN_MS: "100",
        CLAUDE_CONFIG_DIR: "",
      },
    });
    const secretFile = join(f.dir, "lark-secret");
    await writeFile(secretFile, "lark-signing-secret\n", { mode: 0o600 });
    const slackUrl = join(f.dir, "slack-url");
    await writeFile(slackUrl, `${receiver.url}/slack?secret-part=T000/B000/XXXX\n`, { mode: 0o600 });
    await notify(["add", "generic", "--url", `${receiver.url}/generic`, "--format", "generic"]);
    await notify(
      ["add", "ntfy", "--url", `${receiver.url}/ntfy`, "--format", "ntfy", "--secret-file", "-"],
      "tk_ntfy\n",
    );
    await notify(["add", "slack", "--url-file", slackUrl, "--format", "slack"]);
    await notify(["add", "discord", "--url", `${receiver.url}/discord`, "--format", "discord"]);
    await notify(
      ["add", "telegram", "--url", receiver.url, "--format", "telegram", "--chat-id=-100123"],
      "123:bot-token\n",
    );
    await notify(["add", "lark", "--url", `${receiver.url}/lark`, "--format", "lark", "--secret-file", secretFile]);
    await notify([
      "add",
      "only-turns",
      "--url",
      `${receiver.url}/only-turns`,
      "--format",
      "generic",
      "--kind",
      "turn-finished",
    ]);
    await notify([
      "add",
      "other-names",
      "--url",
      `${receiver.url}/other-names`,
      "--format",
      "generic",
      "--session",
      "other-*",
    ]);
  }, 90_000);

  afterAll(async () => {
    await f?.close();
    await receiver.close();
  });

  it("lists the webhooks without their secrets or secret URLs", async () => {
    const out = await notify(["ls"]);
    expect(out).toMatch(/^slack\s+slack\s+http:\/\/127\.0\.0\.1:\d+\s+-/m);
    expect(out).toMatch(/^telegram\s+telegram\s+http:\/\/127\.0\.0\.1:\d+\/\s+stored/m);
    expect(out).toMatch(/^only-turns\s+generic\s+\S+\s+-\s+turn-finished$/m);
    expect(out).not.toContain("secret-part");
    expect(out).not.toContain("bot-token");
    expect(out).not.toContain("lark-signing-secret");
    expect((await stat(join(f.hub.home, "webhooks.json"))).mode & 0o777).toBe(0o600);
  });

  it("posts a prompt to each format as that service expects, and only to the webhooks whose filters take it", async () => {
    const name = await agentInReview("fix-bug");
    for (const path of [
      "/generic",
      "/ntfy",
      "/slack?secret-part=T000/B000/XXXX",
      "/discord",
      "/bot123:bot-token/sendMessage",
      "/lark",
    ]) {
      await waitFor(() => receiver.to(path, "fix-bug").length === 1, `the ${path} receiver`, 20_000);
    }
    const link = `${f.hub.url}/sessions/local/fix-bug`;
    const [generic] = receiver.to("/generic", "fix-bug");
    expect(JSON.parse(generic?.body ?? "")).toEqual({
      kind: "prompt",
      session: name,
      node: "local",
      title: "fix-bug on local",
      summary: "wants to run `rm -rf build`",
      url: link,
    });
    const [ntfy] = receiver.to("/ntfy", "fix-bug");
    expect(ntfy?.body).toBe("wants to run `rm -rf build`");
    expect(ntfy?.headers).toMatchObject({ title: "fix-bug on local", click: link, authorization: "Bearer tk_ntfy" });
    const [slack] = receiver.to("/slack?secret-part=T000/B000/XXXX", "fix-bug");
    expect(JSON.parse(slack?.body ?? "")).toEqual({
      text: `*fix-bug on local*: wants to run \`rm -rf build\`\n<${link}|Open>`,
    });
    const [discord] = receiver.to("/discord", "fix-bug");
    expect(JSON.parse(discord?.body ?? "")).toEqual({
      content: `**fix-bug on local**: wants to run \`rm -rf build\`\n${link}`,
      allowed_mentions: { parse: [] },
    });
    const [telegram] = receiver.to("/bot123:bot-token/sendMessage", "fix-bug");
    expect(JSON.parse(telegram?.body ?? "")).toEqual({
      chat_id: "-100123",
      text: `fix-bug on local: wants to run \`rm -rf build\`\n${link}`,
      disable_web_page_preview: true,
    });
    const lark = JSON.parse(receiver.to("/lark", "fix-bug")[0]?.body ?? "") as Record<string, unknown>;
    expect(lark).toMatchObject({
      msg_type: "text",
      content: { text: `fix-bug on local: wants to run \`rm -rf build\`\n${link}` },
    });
    // Lark's signature: HMAC-SHA256 keyed with "timestamp\nsecret" over nothing.
    expect(lark.sign).toBe(createHmac("sha256", `${lark.timestamp}\nlark-signing-secret`).update("").digest("base64"));
    expect(receiver.to("/only-turns", "fix-bug")).toEqual([]);
    expect(receiver.to("/other-names", "fix-bug")).toEqual([]);
    const log = await waitFor(async () => {
      const d = (await notifications().listDeliveries({})).deliveries.filter((x) => x.session === name);
      return d.length === 6 && d;
    }, "six deliveries logged");
    expect(log.every((d) => d.outcome === DeliveryOutcome.DELIVERED)).toBe(true);
  }, 40_000);

  it("retries a failing receiver with backoff and logs each try, while one that never answers holds up nothing", async () => {
    await notify(["add", "failing", "--url", `${receiver.url}/failing`, "--format", "generic"]);
    await notify(["add", "hanging", "--url", `${receiver.url}/hanging`, "--format", "generic"]);
    const first = await agentInReview("other-one");
    await waitFor(() => receiver.to("/hanging", "other-one").length === 1, "the hanging receiver asked", 20_000);
    await waitFor(() => receiver.to("/other-names", "other-one").length === 1, "the filtered receiver", 20_000);
    // While the hanging receiver holds its request, the next event still reaches everyone at once.
    await agentInReview("other-two");
    await waitFor(() => receiver.to("/generic", "other-two").length === 1, "the next event delivered", 20_000);
    // The hanging request has not even timed out yet (no outcome logged): nothing waited for it.
    expect((await notifications().listDeliveries({ target: "webhooks/hanging" })).deliveries).toEqual([]);
    expect(receiver.to("/hanging", "other-one")).toHaveLength(1);
    await waitFor(() => receiver.to("/failing", "other-one").length >= 2, "the failing receiver retried", 20_000);
    const [a, b] = receiver.to("/failing", "other-one");
    // The backoff did it: RETRY_INITIAL_MS (2 s) between the first two tries.
    expect((b?.at ?? 0) - (a?.at ?? 0)).toBeGreaterThanOrEqual(1_900);
    const log = await waitFor(async () => {
      const d = (await notifications().listDeliveries({ target: "webhooks/failing" })).deliveries.filter(
        (x) => x.session === first,
      );
      return d.length >= 2 && d;
    }, "the failing receiver's tries logged");
    for (const d of log) {
      expect([DeliveryOutcome[d.outcome], d.httpStatus, d.error]).toEqual([
        "RETRYING",
        500,
        "500 Internal Server Error: receiver down",
      ]);
    }
    expect(log.map((d) => d.attempt)).toEqual(log.map((_, i) => log.length - i));
    const out = await notify(["deliveries", "failing"]);
    expect(out).toMatch(
      /webhooks\/failing\s+nodes\/local\/sessions\/other-one\s+prompt\s+retrying\s+1\s+500\s+500 Internal Server Error: receiver down/,
    );
  }, 60_000);

  it("sends a test through one webhook on request, and says when it fails", async () => {
    expect(await notify(["test", "discord"])).toBe("webhooks/discord: delivered (HTTP 204)\n");
    expect(receiver.received.at(-1)?.body).toContain("Notifications from this Hub reach you.");
    const failed = await runCli(["notify", "test", "failing"], f.cliEnv);
    expect([failed.code, failed.stdout]).toEqual([
      1,
      "webhooks/failing: failed (HTTP 500): 500 Internal Server Error: receiver down\n",
    ]);
    const unknown = await runCli(["notify", "test", "nope"], f.cliEnv);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain("webhooks/nope not found");
  });

  it("refuses a secret on the command line's place and bad input, with the reason", async () => {
    const noToken = await runCliWithInput(
      ["notify", "add", "tg2", "--format", "telegram", "--chat-id", "5"],
      f.cliEnv,
      "",
    );
    expect(noToken.code).not.toBe(0);
    expect(noToken.stderr).toContain("the Telegram bot token is empty");
    const badUrl = await runCli(
      ["notify", "add", "x", "--url", "http://example.com/hook", "--format", "generic"],
      f.cliEnv,
    );
    expect(badUrl.stderr).toContain("url: must be an https URL (or http on this machine)");
    const taken = await runCli(
      ["notify", "add", "generic", "--url", `${receiver.url}/generic`, "--format", "generic"],
      f.cliEnv,
    );
    expect(taken.stderr).toContain("webhooks/generic already exists");
    const badFormat = await runCli(["notify", "add", "y", "--url", `${receiver.url}/y`, "--format", "pager"], f.cliEnv);
    expect(badFormat.stderr).toContain("--format: choose one of generic, ntfy, slack, discord, telegram, lark");
  });
});
