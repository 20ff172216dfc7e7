import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Connectivity } from "../../gen/staragent/v1/node_service_pb.js";
import { WatchEventType } from "../../gen/staragent/v1/session_service_pb.js";
import { failureOf, type HubFixture, startHubFixture } from "../foundation/hub-fixture.js";
import { readWatch } from "../foundation/watch-events.js";
import { closedPort } from "../support/ports.js";
import { runCli, runCliWithInput } from "../support/servers.js";
import { waitFor } from "../support/wait.js";
import { startW1Node, type W1Node } from "./w1-node.js";

/**
 * AddNode looks at the Node before storing it (its health, then one call with the token) and refuses
 * one that cannot work with one sentence, unless forced; UpdateNode fixes a Node's token or URL in
 * place. Through a real Hub, a real Node and the CLI.
 */
describe("AddNode's checks and UpdateNode", () => {
  let w1Node: W1Node | undefined;
  let f: HubFixture | undefined;
  let dir: string;
  const hub = () => f as HubFixture;
  const w1Url = () => (w1Node as W1Node).server.url;
  const w1Token = () => (w1Node as W1Node).token;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "sa-node-checks-"));
    w1Node = await startW1Node();
    f = await startHubFixture();
  });
  afterAll(async () => {
    await f?.close();
    await w1Node?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("refuses a wrong token or an address that leads nowhere with one sentence, and adds it with force", async () => {
    const wrong = await failureOf(hub().nodes.addNode({ nodeId: "w1", url: w1Url(), token: "not-the-token" }));
    expect(wrong.code).toBe("InvalidArgument");
    expect(wrong.message).toMatch(
      /^Node w1 refused the token\. Give the one in the Node's \$STARAGENT_HOME\/node_token/,
    );
    expect(wrong.message).toMatch(
      /To add it all the same and fix it later, use force \(staragent nodes add --force\)\.$/,
    );
    const port = await closedPort();
    const nowhere = await failureOf(
      hub().nodes.addNode({ nodeId: "w9", url: `http://127.0.0.1:${port}`, token: "t0ken-for-w9" }),
    );
    expect(nowhere.code).toBe("FailedPrecondition");
    expect(nowhere.message).toMatch(new RegExp(`^Node w9 cannot be reached at http://127\\.0\\.0\\.1:${port} \\(`));
    expect((await hub().nodes.listNodes({})).nodes.map((n) => n.name)).toEqual(["nodes/local"]);
    for (const out of [wrong.message, nowhere.message, hub().hub.stderr()]) expect(out).not.toContain(w1Token());

    // The CLI says the same, in one line.
    const cli = await runCliWithInput(["nodes", "add", "w1", w1Url()], hub().cliEnv, "not-the-token\n");
    expect(cli.code).toBe(1);
    expect(cli.stderr).toMatch(/^staragent nodes: InvalidArgument: Node w1 refused the token\. [^\n]*\n$/);

    // Forced, it is stored and shown OFFLINE with the reason.
    const forced = await runCliWithInput(["nodes", "add", "w1", w1Url(), "--force"], hub().cliEnv, "not-the-token\n");
    expect(forced.code).toBe(0);
    await waitFor(
      async () => (await hub().nodes.getNode({ name: "nodes/w1" })).node?.connectivity === Connectivity.OFFLINE,
      "w1 OFFLINE",
    );
  });

  it("changes a Node's token in place, through the API and the CLI; its sessions then show", async () => {
    const watch = readWatch((signal) => hub().sessions.watchSessions({ parent: "nodes/-" }, { signal }));
    try {
      await watch.next((e) => e.type === WatchEventType.SNAPSHOT, "the snapshot");
      // Still the wrong one: refused, and nothing changes.
      const still = await failureOf(hub().nodes.updateNode({ name: "nodes/w1", token: "still-wrong" }));
      expect([still.code, still.message.split(".")[0]]).toEqual(["InvalidArgument", "Node w1 refused the token"]);
      // It names the command that changes a Node, not the one that adds it.
      expect(still.message).toMatch(
        /To save the change all the same and fix it later, use force \(staragent nodes set --force\)\.$/,
      );
      const tokenFile = join(dir, "w1-token");
      await writeFile(tokenFile, `${w1Token()}\n`, { mode: 0o600 });
      const set = await runCli(["nodes", "set", "w1", "--token-file", tokenFile], hub().cliEnv);
      expect(set).toMatchObject({ code: 0, stderr: "" });
      expect(set.stdout).toMatch(/^changed nodes\/w1 at http:\/\/127\.0\.0\.1:\d+: online\n$/);
      await watch.next(
        (e) => e.sessions.some((s) => s.name === "nodes/w1/sessions/on-w1" && !s.nodeUnreachable),
        "w1's sessions once its token is right",
      );
      const node = (await hub().nodes.getNode({ name: "nodes/w1" })).node;
      expect([node?.connectivity, node?.lastError]).toEqual([Connectivity.ONLINE, ""]);
      // The URL too, checked the same way.
      const port = await closedPort();
      const moved = await failureOf(hub().nodes.updateNode({ name: "nodes/w1", url: `http://127.0.0.1:${port}` }));
      expect(moved.code).toBe("FailedPrecondition");
      expect((await hub().nodes.getNode({ name: "nodes/w1" })).node?.url).toBe(w1Url());
      expect((await failureOf(hub().nodes.updateNode({ name: "nodes/local", token: "x" }))).code).toBe(
        "FailedPrecondition",
      );
      expect((await failureOf(hub().nodes.updateNode({ name: "nodes/nope", token: "x" }))).code).toBe("NotFound");
      const usage = await runCli(["nodes", "set", "w1"], hub().cliEnv);
      expect(usage.code).toBe(2);
      expect(usage.stderr).toMatch(/^staragent nodes: nothing to change/);
    } finally {
      await watch.close();
    }
  });
});
