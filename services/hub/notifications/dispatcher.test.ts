import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Delivery, DeliveryOutcome } from "../../../gen/staragent/v1/notification_service_pb.js";
import {
  PendingPromptSchema,
  SessionSchema,
  SessionStatus,
  StatusReason,
} from "../../../gen/staragent/v1/session_pb.js";
import {
  WatchEventType,
  type WatchSessionsResponse,
  WatchSessionsResponseSchema,
} from "../../../gen/staragent/v1/session_service_pb.js";
import { createLogger } from "../../common/log.js";
import { DeliveryLog } from "./delivery-log.js";
import { NotificationDispatcher, PROMPT_DETAIL_WAIT_MS, SUPERSEDED_ERROR } from "./dispatcher.js";
import { openNotificationFiles } from "./notification-store.js";
import { loadOrCreateVapidKeys } from "./vapid-keys.js";

/** Long enough that a retry never comes on its own while the test runs; the newer event ends it. */
const SLOW_RETRY_MS = 60_000;

/** A webhook receiver on loopback whose answer to each request the test decides. */
class Receiver {
  readonly bodies: string[] = [];
  private readonly waiting: Array<{ match: (body: string) => boolean; resolve: (res: ServerResponse) => void }> = [];
  private readonly server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString();
      this.bodies.push(body);
      const i = this.waiting.findIndex((w) => w.match(body));
      if (i < 0) res.writeHead(200).end("ok");
      else this.waiting.splice(i, 1)[0]?.resolve(res);
    });
  });
  url = "";

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  /** The response to the next request whose body contains `text`, held for the test to answer. */
  next(text: string): Promise<ServerResponse> {
    return new Promise((resolve) => this.waiting.push({ match: (b) => b.includes(text), resolve }));
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/** A session of node w1 at an approval prompt for `command` (known only from the CLI's state without one). */
function atPrompt(command?: string): WatchSessionsResponse {
  return create(WatchSessionsResponseSchema, {
    type: WatchEventType.UPSERTED,
    sessions: [
      create(SessionSchema, {
        name: "nodes/w1/sessions/fix-bug",
        node: "w1",
        tmuxSession: "fix-bug",
        status: SessionStatus.REVIEW,
        statusReason: StatusReason.INPUT_PROMPT,
        prompt: "waiting for permission prompt",
        pendingPrompt:
          command === undefined ? undefined : create(PendingPromptSchema, { command, fingerprint: `fp-${command}` }),
      }),
    ],
  });
}

/**
 * The dispatcher against a real webhook receiver on loopback, its files in a temporary home, fed a
 * watch the test writes: a newer notification of a session ends the older one's delivery to the same
 * target, whether that one waits for its retry or its request is still under way.
 */
describe("NotificationDispatcher: a newer notification supersedes an older one", () => {
  let home: string;
  let receiver: Receiver;
  let dispatcher: NotificationDispatcher;
  let events: (e: WatchSessionsResponse) => void;
  const deliveries: Delivery[] = [];

  /** Resolves with the first logged delivery that `match` takes (logged already or to come). */
  function logged(match: (d: Delivery) => boolean): Promise<Delivery> {
    const found = deliveries.find(match);
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => {
      const before = dispatcher.onDelivery;
      dispatcher.onDelivery = (d) => {
        before?.(d);
        if (match(d)) resolve(d);
      };
    });
  }

  beforeEach(async () => {
    deliveries.length = 0;
    home = await mkdtemp(join(tmpdir(), "sa-dispatch-"));
    receiver = new Receiver();
    await receiver.start();
    const log = createLogger("test", "error");
    const files = openNotificationFiles(home, log);
    await files.notified.write({});
    await files.webhooks.write([
      {
        id: "chat",
        url: receiver.url,
        format: "generic",
        secret: "",
        chatId: "",
        nodeFilter: "",
        sessionPattern: "",
        kinds: [],
        createTime: Date.now(),
      },
    ]);
    const queue: WatchSessionsResponse[] = [create(WatchSessionsResponseSchema, { type: WatchEventType.SNAPSHOT })];
    let wake: (() => void) | undefined;
    events = (e) => {
      queue.push(e);
      wake?.();
    };
    dispatcher = new NotificationDispatcher({
      files,
      deliveries: new DeliveryLog(home, log),
      keys: await loadOrCreateVapidKeys(home, log),
      vapidSubject: "mailto:test@localhost",
      dashboardUrl: () => "http://127.0.0.1:1",
      log,
      timing: { retryInitialMs: SLOW_RETRY_MS, retryMaxMs: SLOW_RETRY_MS },
      watch: async function* (signal) {
        while (!signal.aborted) {
          const e = queue.shift();
          if (e) {
            yield e;
            continue;
          }
          await new Promise<void>((resolve) => {
            wake = resolve;
            signal.addEventListener("abort", () => resolve(), { once: true });
          });
        }
      },
    });
    dispatcher.onDelivery = (d) => deliveries.push(d);
    await dispatcher.start();
  });

  afterEach(async () => {
    await dispatcher?.close();
    await receiver?.close();
    await rm(home, { recursive: true, force: true });
  });

  it("drops the older one's pending retry: the receiver that failed and recovered gets the newer one only", async () => {
    const first = receiver.next("npm test");
    events(atPrompt("npm test"));
    (await first).writeHead(500).end("down");
    await logged((d) => d.summary.includes("npm test") && d.outcome === DeliveryOutcome.RETRYING);

    events(atPrompt("npm run build"));
    const newer = await logged((d) => d.summary.includes("npm run build") && d.outcome === DeliveryOutcome.DELIVERED);
    const older = await logged((d) => d.summary.includes("npm test") && d.outcome === DeliveryOutcome.SUPERSEDED);
    // The superseding did it: the retry (a minute away) ended at once, without a request.
    expect([older.attempt, older.error]).toEqual([2, SUPERSEDED_ERROR]);
    expect(newer.attempt).toBe(1);
    expect(receiver.bodies.map((b) => (JSON.parse(b) as { summary: string }).summary)).toEqual([
      "wants to run `npm test`",
      "wants to run `npm run build`",
    ]);
    // Newest first: the older one ended when the newer came, before the newer's answer.
    expect(dispatcher.listDeliveries("webhooks/chat", 10).map((d) => DeliveryOutcome[d.outcome])).toEqual([
      "DELIVERED",
      "SUPERSEDED",
      "RETRYING",
    ]);
  });

  it("sends a prompt known only from the CLI's state as one notification, once the screen says what it asks", async () => {
    events(atPrompt());
    await new Promise((r) => setTimeout(r, 300));
    events(atPrompt("rm -rf build"));
    await logged((d) => d.summary.includes("rm -rf build") && d.outcome === DeliveryOutcome.DELIVERED);
    await new Promise((r) => setTimeout(r, PROMPT_DETAIL_WAIT_MS));
    expect(receiver.bodies.map((b) => (JSON.parse(b) as { summary: string }).summary)).toEqual([
      "wants to run `rm -rf build`",
    ]);
  });

  it("sends the vague one after PROMPT_DETAIL_WAIT_MS when the screen never says more", async () => {
    const started = Date.now();
    events(atPrompt());
    const sent = await logged((d) => d.outcome === DeliveryOutcome.DELIVERED);
    expect(sent.summary).toBe("asks: waiting for permission prompt");
    expect(Date.now() - started).toBeGreaterThanOrEqual(PROMPT_DETAIL_WAIT_MS - 20);
  });

  it("ends the older one's request still under way, so it cannot land after the newer one", async () => {
    const first = receiver.next("npm test");
    events(atPrompt("npm test"));
    const held = await first;
    events(atPrompt("npm run build"));
    const older = await logged((d) => d.summary.includes("npm test"));
    const newer = await logged((d) => d.summary.includes("npm run build"));
    expect([DeliveryOutcome[older.outcome], older.attempt, older.error]).toEqual(["SUPERSEDED", 1, SUPERSEDED_ERROR]);
    expect(DeliveryOutcome[newer.outcome]).toBe("DELIVERED");
    // The older request's connection was closed by the Hub: an answer now reaches no one.
    expect(held.req.destroyed || held.destroyed).toBe(true);
  });
});
