import { mkdir, mkdtemp, realpath, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Client, Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Connectivity, NodeService } from "../../gen/staragent/v1/node_service_pb.js";
import {
  DeliveryOutcome,
  NotificationKind,
  NotificationService,
} from "../../gen/staragent/v1/notification_service_pb.js";
import { SessionStatus, StatusReason } from "../../gen/staragent/v1/session_pb.js";
import { SessionService } from "../../gen/staragent/v1/session_service_pb.js";
import { rejectionOf } from "../support/codes.js";
import { MockPushService, type ReceivedPush, type TestDevice } from "../support/mock-push-service.js";
import { runCli, type ServerProcess, startServerProcess } from "../support/servers.js";
import { standInEnv } from "../support/stand-in-env.js";
import { createTestTmux, type TestTmux } from "../support/tmux.js";
import { waitFor } from "../support/wait.js";
import { grpcClient, testToken } from "./hub-fixture.js";

/** The decrypted payload of a push. */
function payload(p: ReceivedPush): {
  title: string;
  body: string;
  tag: string;
  path: string;
  session: string;
  node: string;
  kind: string;
} {
  return JSON.parse(p.plaintext);
}

/**
 * Web Push end to end: a Hub process and a remote Node process (each on its own tmux server, the
 * stand-in CLIs in real panes), a mock push service on loopback that verifies each request's VAPID
 * JWT and decrypts its aes128gcm payload with the test device's keys. The Hub restarts and the Node
 * goes away and comes back within the file: neither re-notifies what was delivered.
 */
describe("Web Push from the Hub's merged watch", () => {
  const userToken = testToken();
  const nodeToken = testToken();
  let dir: string;
  let hubHome: string;
  let hubTmux: TestTmux;
  let hubProcess: ServerProcess | undefined;
  let nodeTmux: TestTmux;
  let nodeProcess: ServerProcess | undefined;
  let nodePort = 0;
  let nodeHome: string;
  const push = new MockPushService();
  let phone: TestDevice;
  let phoneName = "";

  const notifications = (): Client<typeof NotificationService> =>
    grpcClient(NotificationService, (hubProcess as ServerProcess).url, userToken);
  const sessions = (): Client<typeof SessionService> =>
    grpcClient(SessionService, (hubProcess as ServerProcess).url, userToken);

  async function startHub(): Promise<void> {
    hubProcess = await startServerProcess({
      kind: "hub",
      tmuxSocket: hubTmux.socketName,
      token: userToken,
      home: hubHome,
      env: standInEnv(join(dir, "hub-user"), "100"),
    });
  }

  async function startNode(): Promise<void> {
    const env = standInEnv(join(dir, "n1-user"), "100");
    nodeProcess = await startServerProcess({
      kind: "node",
      tmuxSocket: nodeTmux.socketName,
      token: nodeToken,
      home: nodeHome,
      args: ["--name", "n1", ...(nodePort ? ["--port", String(nodePort)] : [])],
      env,
    });
    nodePort = Number(new URL(nodeProcess.url).port);
  }

  async function nodeOnline(): Promise<void> {
    const nodes = grpcClient(NodeService, (hubProcess as ServerProcess).url, userToken);
    await waitFor(
      async () => (await nodes.listNodes({})).nodes.every((n) => n.connectivity === Connectivity.ONLINE),
      "n1 ONLINE",
      20_000,
    );
  }

  /** Starts the claude stand-in as `id` on n1 and waits until it is idle. */
  async function agent(id: string): Promise<string> {
    await sessions().createSession({
      parent: "nodes/n1",
      sessionId: id,
      cwd: join(dir, "project"),
      command: ["claude"],
    });
    const name = `nodes/n1/sessions/${id}`;
    await waitFor(
      async () => (await sessions().getSession({ name })).session?.statusReason === StatusReason.NO_TURN,
      `${id} idle`,
      20_000,
    );
    return name;
  }

  /**
   * Brings a new session `id` to a prompt and waits for its push; answers the sessions of every push
   * the phone got since its `before`th. Events reach the watch in order, so a re-notification of an
   * older prompt would come before this one.
   */
  async function pushesAfterNewPrompt(before: number, id: string): Promise<string[]> {
    const name = await agent(id);
    await sessions().sendChatMessage({ name, text: "please approve" });
    await push.waitFor((p) => payload(p).session === name, `for ${id}'s prompt`, 20_000);
    return push
      .pushesTo("phone")
      .slice(before)
      .map((p) => payload(p).session);
  }

  beforeAll(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), "sa-notify-")));
    await Promise.all(["hub-user", "n1-user", "project", "hub-home", "n1-home"].map((d) => mkdir(join(dir, d))));
    hubHome = join(dir, "hub-home");
    nodeHome = join(dir, "n1-home");
    hubTmux = createTestTmux();
    nodeTmux = createTestTmux(standInEnv(join(dir, "n1-user"), "100"));
    await push.start();
    await startNode();
    await startHub();
    const tokenFile = join(dir, "n1-token");
    await writeFile(tokenFile, `${nodeToken}\n`, { mode: 0o600 });
    const env = { STARAGENT_URL: hubProcess?.url, STARAGENT_AUTH_TOKEN: userToken, STARAGENT_HOME: hubHome };
    const added = await runCli(["nodes", "add", "n1", nodeProcess?.url ?? "", "--token-file", tokenFile], env);
    if (added.code !== 0) throw new Error(`staragent nodes add failed: ${added.stderr}`);
    await nodeOnline();
    // Keeps n1's tmux server alive between the tests' sessions.
    await sessions().createSession({ parent: "nodes/n1", sessionId: "keeper", cwd: dir, command: ["sleep", "3600"] });
    phone = push.device("phone");
    const added2 = await notifications().addPushSubscription({
      endpoint: phone.endpoint,
      p256dh: phone.p256dh,
      auth: phone.auth,
      displayName: "Pixel, Chrome",
    });
    phoneName = added2.subscription?.name ?? "";
  }, 90_000);

  afterAll(async () => {
    await hubProcess?.stop();
    await nodeProcess?.stop();
    await hubTmux?.close();
    await nodeTmux?.close();
    await push.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("refuses every call without the user token", async () => {
    const anonymous = grpcClient(NotificationService, (hubProcess as ServerProcess).url);
    expect((await rejectionOf(anonymous.getVapidPublicKey({}))).code).toBe(Code.Unauthenticated);
    expect((await rejectionOf(anonymous.listPushSubscriptions({}))).code).toBe(Code.Unauthenticated);
  });

  it("stores the subscription with mode 0600, never showing its endpoint", async () => {
    const list = await notifications().listPushSubscriptions({});
    expect(list.subscriptions.map((s) => [s.name, s.displayName, s.pushService])).toEqual([
      [phoneName, "Pixel, Chrome", push.origin],
    ]);
    expect(JSON.stringify(list, (_k, v) => (typeof v === "bigint" ? String(v) : v))).not.toContain("/push/phone");
    expect((await stat(join(hubHome, "push-subscriptions.json"))).mode & 0o777).toBe(0o600);
    expect((await stat(join(hubHome, "vapid.json"))).mode & 0o777).toBe(0o600);
  });

  it("pushes a prompt on a remote Node: VAPID-signed, and the payload decrypts to session, machine and summary", async () => {
    const name = await agent("fix-bug");
    await sessions().sendChatMessage({ name, text: "please approve" });
    const received = await push.waitFor((p) => payload(p).session === name, "for fix-bug's prompt");
    const { publicKey } = await notifications().getVapidPublicKey({});
    expect(received.vapidKey).toBe(publicKey);
    expect(received.claims.aud).toBe(push.origin);
    expect(received.headers["content-encoding"]).toBe("aes128gcm");
    expect(received.headers.urgency).toBe("high");
    expect(payload(received)).toEqual({
      title: "fix-bug on n1",
      body: "wants to run `rm -rf build`",
      tag: `review:${name}`,
      path: "/sessions/n1/fix-bug",
      session: name,
      node: "n1",
      kind: "prompt",
    });
    // Logged once the Hub has the push service's answer, just after the mock sent it.
    const delivery = await waitFor(
      async () =>
        (await notifications().listDeliveries({ target: phoneName })).deliveries.find((d) => d.session === name),
      "the delivery logged",
    );
    expect(delivery).toMatchObject({
      outcome: DeliveryOutcome.DELIVERED,
      kind: NotificationKind.PROMPT,
      httpStatus: 201,
      attempt: 1,
    });
  });

  it("retries with backoff when the push service fails, and logs each attempt", async () => {
    push.answer("phone", 503, 500);
    const name = await agent("retry");
    await sessions().sendChatMessage({ name, text: "hello there" });
    const delivered = await push.waitFor(
      (p) => payload(p).session === name && p.status === 201,
      "delivered after two failures",
      30_000,
    );
    const attempts = push.pushesTo("phone").filter((p) => payload(p).session === name);
    expect(attempts.map((p) => p.status)).toEqual([503, 500, 201]);
    // The backoff did it: 2 s before the second attempt, 4 s before the third.
    expect((attempts[1]?.at ?? 0) - (attempts[0]?.at ?? 0)).toBeGreaterThanOrEqual(1_900);
    expect((attempts[2]?.at ?? 0) - (attempts[1]?.at ?? 0)).toBeGreaterThanOrEqual(3_900);
    expect(payload(delivered)).toMatchObject({ kind: "turn-finished", body: "finished: Done: hello there" });
    const log = await waitFor(async () => {
      const all = (await notifications().listDeliveries({ target: phoneName })).deliveries;
      const mine = all.filter((d) => d.session === name);
      return mine.length === 3 && mine;
    }, "three attempts logged");
    expect(log.map((d) => [DeliveryOutcome[d.outcome], d.attempt, d.httpStatus])).toEqual([
      ["DELIVERED", 3, 201],
      ["RETRYING", 2, 500],
      ["RETRYING", 1, 503],
    ]);
  }, 40_000);

  it("does not notify again what was delivered when the Node comes back after an outage", async () => {
    const before = push.pushesTo("phone").length;
    await nodeProcess?.stop();
    await waitFor(
      async () =>
        (await grpcClient(NodeService, (hubProcess as ServerProcess).url, userToken).listNodes({})).nodes.some(
          (n) => n.connectivity !== Connectivity.ONLINE,
        ),
      "n1 seen offline",
      20_000,
    );
    await startNode();
    await nodeOnline();
    // The Node's fresh snapshot (fix-bug still at its prompt) reaches the watch before this new event.
    expect(await pushesAfterNewPrompt(before, "after-outage")).toEqual(["nodes/n1/sessions/after-outage"]);
  }, 60_000);

  it("does not notify again what was delivered after a Hub restart, and keeps its delivery log", async () => {
    const before = push.pushesTo("phone").length;
    const logged = (await notifications().listDeliveries({})).deliveries;
    expect(logged.length).toBeGreaterThan(3);
    await hubProcess?.stop();
    await startHub();
    // The log came back from deliveries.json (mode 0600): every attempt, in order, as it was.
    const after = (await notifications().listDeliveries({ pageSize: 1000 })).deliveries;
    expect(after.slice(after.length - logged.length)).toEqual(logged);
    expect((await stat(join(hubHome, "deliveries.json"))).mode & 0o777).toBe(0o600);
    await nodeOnline();
    expect(await pushesAfterNewPrompt(before, "after-restart")).toEqual(["nodes/n1/sessions/after-restart"]);
  }, 60_000);

  it("skips only the device whose own page shows the session, and removes a subscription the push service calls gone", async () => {
    const tablet = push.device("tablet");
    const gone = push.device("gone");
    push.answer("gone", 410);
    const tabletName =
      (
        await notifications().addPushSubscription({
          endpoint: tablet.endpoint,
          p256dh: tablet.p256dh,
          auth: tablet.auth,
        })
      ).subscription?.name ?? "";
    const goneName =
      (await notifications().addPushSubscription({ endpoint: gone.endpoint, p256dh: gone.p256dh, auth: gone.auth }))
        .subscription?.name ?? "";
    const name = await agent("viewed");
    const report = await notifications().reportViewing({ subscription: phoneName, session: name, visible: true });
    expect(report.ttlSeconds).toBeGreaterThan(0);
    await sessions().sendChatMessage({ name, text: "please approve" });
    await push.waitFor((p) => p.device === "tablet" && payload(p).session === name, "to the tablet");
    await push.waitFor((p) => p.device === "gone" && payload(p).session === name, "to the gone device");
    const outcomes = await waitFor(async () => {
      const log = (await notifications().listDeliveries({})).deliveries.filter((d) => d.session === name);
      return log.length === 3 && log;
    }, "three deliveries for the viewed session");
    expect(Object.fromEntries(outcomes.map((d) => [d.target, DeliveryOutcome[d.outcome]]))).toEqual({
      [phoneName]: "SUPPRESSED_VIEWING",
      [tabletName]: "DELIVERED",
      [goneName]: "SUBSCRIPTION_GONE",
    });
    expect(push.pushesTo("phone").some((p) => payload(p).session === name)).toBe(false);
    const left = (await notifications().listPushSubscriptions({})).subscriptions.map((s) => s.name).sort();
    expect(left).toEqual([phoneName, tabletName].sort());
    // The session is still in review: what a prompt is does not change by being suppressed.
    const s = (await sessions().getSession({ name })).session;
    expect(s?.status).toBe(SessionStatus.REVIEW);
  }, 40_000);

  it("lets a renewed subscription replace the old one, keeping the device's resource name and name", async () => {
    const old = push.device("laptop-old");
    const renewed = push.device("laptop-new");
    const added = await notifications().addPushSubscription({
      endpoint: old.endpoint,
      p256dh: old.p256dh,
      auth: old.auth,
      displayName: "Work laptop",
    });
    const name = added.subscription?.name ?? "";
    // What the service worker sends on pushsubscriptionchange: the new subscription, no name.
    const res = await notifications().addPushSubscription({
      endpoint: renewed.endpoint,
      p256dh: renewed.p256dh,
      auth: renewed.auth,
      replacesEndpoint: old.endpoint,
    });
    expect([res.subscription?.name, res.subscription?.displayName]).toEqual([name, "Work laptop"]);
    const listed = (await notifications().listPushSubscriptions({})).subscriptions.filter((s) => s.name === name);
    expect(listed.map((s) => s.displayName)).toEqual(["Work laptop"]);
    // The renewed endpoint gets the device's pushes; the old one no more.
    const sent = await notifications().testNotification({ target: name });
    expect(DeliveryOutcome[sent.delivery?.outcome ?? 0]).toBe("DELIVERED");
    await push.waitFor((p) => p.device === "laptop-new", "the test push to the renewed endpoint");
    expect(push.pushesTo("laptop-old")).toEqual([]);
    // Sent again (the page's own subscribe after the worker's), it is still the same device.
    const again = await notifications().addPushSubscription({
      endpoint: renewed.endpoint,
      p256dh: renewed.p256dh,
      auth: renewed.auth,
    });
    expect([again.subscription?.name, again.subscription?.displayName]).toEqual([name, "Work laptop"]);
    await notifications().removePushSubscription({ name });
  });

  it("answers bad input with INVALID_ARGUMENT and unknown names with NOT_FOUND", async () => {
    const bad = await rejectionOf(
      notifications().addPushSubscription({
        endpoint: "http://push.example.com/x",
        p256dh: phone.p256dh,
        auth: phone.auth,
      }),
    );
    expect([bad.code, bad.rawMessage]).toEqual([
      Code.InvalidArgument,
      "endpoint: must be an https URL (or http on this machine), not http://push.example.com",
    ]);
    const shortKey = await rejectionOf(
      notifications().addPushSubscription({ endpoint: phone.endpoint, p256dh: "AAAA", auth: phone.auth }),
    );
    expect(shortKey.code).toBe(Code.InvalidArgument);
    expect(shortKey.rawMessage).toContain("p256dh: must be 65 bytes");
    const badReplaced = await rejectionOf(
      notifications().addPushSubscription({
        endpoint: phone.endpoint,
        p256dh: phone.p256dh,
        auth: phone.auth,
        replacesEndpoint: "not a url",
      }),
    );
    expect([badReplaced.code, badReplaced.rawMessage]).toEqual([
      Code.InvalidArgument,
      'replaces_endpoint: "not a url" is not a URL',
    ]);
    const unknown = await rejectionOf(notifications().removePushSubscription({ name: "pushSubscriptions/nope" }));
    expect([unknown.code, unknown.rawMessage]).toEqual([Code.NotFound, "pushSubscriptions/nope not found"]);
    const page = await rejectionOf(notifications().listDeliveries({ pageSize: 5000 }));
    expect(page.code).toBe(Code.InvalidArgument);
  });
});
