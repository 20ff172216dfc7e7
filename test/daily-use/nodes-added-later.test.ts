import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WatchEventType } from "../../gen/staragent/v1/session_service_pb.js";
import { type HubFixture, startHubFixture } from "../foundation/hub-fixture.js";
import { readWatch } from "../foundation/watch-events.js";
import { startW1Node, type W1Node } from "./w1-node.js";

/**
 * A Hub's open watches take in the Nodes added and removed after they started: a tab open on the
 * dashboard shows a Node added from another tab, and forgets one removed, without a reload.
 */
describe("a merged watch and Nodes added or removed after it started", () => {
  let w1Node: W1Node | undefined;
  let f: HubFixture | undefined;
  const hub = () => f as HubFixture;
  const w1 = () => w1Node as W1Node;

  beforeAll(async () => {
    w1Node = await startW1Node();
    f = await startHubFixture();
    await f.tmux.run("new-session", "-d", "-s", "on-local", "sleep 600");
  });
  afterAll(async () => {
    await f?.close();
    await w1Node?.close();
  });

  it("sends the sessions of a Node added after the watch started, and takes them out when it is removed", async () => {
    const watch = readWatch((signal) => hub().sessions.watchSessions({ parent: "nodes/-" }, { signal }));
    const nodes = readNodes(hub());
    try {
      const snapshot = await watch.next(() => true, "the first event");
      expect(snapshot.type).toBe(WatchEventType.SNAPSHOT);
      expect(snapshot.sessions.map((s) => s.name)).toEqual(["nodes/local/sessions/on-local"]);
      await nodes.next((names) => names.join() === "nodes/local", "the first node list");

      await hub().nodes.addNode({ nodeId: "w1", url: w1().server.url, token: w1().token });
      await nodes.next((names) => names.join() === "nodes/local,nodes/w1", "w1 in WatchNodes");
      const upserted = await watch.next(
        (e) => e.type === WatchEventType.UPSERTED && e.sessions.some((s) => s.node === "w1"),
        "w1's sessions",
      );
      expect(upserted.sessions.map((s) => s.name)).toEqual(["nodes/w1/sessions/on-w1"]);

      // Its later changes come through too.
      await w1().tmux.run("new-session", "-d", "-s", "later-on-w1", "sleep 600");
      await watch.next(
        (e) => e.type === WatchEventType.UPSERTED && e.sessions.some((s) => s.name === "nodes/w1/sessions/later-on-w1"),
        "a session created on w1 afterwards",
      );

      await hub().nodes.removeNode({ name: "nodes/w1" });
      await nodes.next((names) => names.join() === "nodes/local", "w1 gone from WatchNodes");
      const removed = await watch.next((e) => e.type === WatchEventType.REMOVED, "w1's sessions removed");
      expect([...removed.removedNames].sort()).toEqual(["nodes/w1/sessions/later-on-w1", "nodes/w1/sessions/on-w1"]);

      // Added again under the same id: its sessions come back.
      await hub().nodes.addNode({ nodeId: "w1", url: w1().server.url, token: w1().token });
      const again = await watch.next(
        (e) => e.type === WatchEventType.UPSERTED && e.sessions.some((s) => s.node === "w1"),
        "w1's sessions after adding it again",
      );
      expect(again.sessions.map((s) => s.name).sort()).toEqual([
        "nodes/w1/sessions/later-on-w1",
        "nodes/w1/sessions/on-w1",
      ]);
    } finally {
      await watch.close();
      await nodes.close();
      await hub()
        .nodes.removeNode({ name: "nodes/w1" })
        .catch(() => undefined);
      await w1()
        .tmux.run("kill-session", "-t", "=later-on-w1")
        .catch(() => undefined);
    }
  });
});

/** Reads WatchNodes as lists of node names, waiting for the one a test expects. */
function readNodes(f: HubFixture) {
  const abort = new AbortController();
  const stream = f.nodes.watchNodes({}, { signal: abort.signal })[Symbol.asyncIterator]();
  return {
    async next(match: (names: string[]) => boolean, what: string): Promise<void> {
      const deadline = Date.now() + 5_000;
      for (;;) {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no ${what} within 5000 ms`)), Math.max(0, deadline - Date.now()));
        });
        try {
          const r = await Promise.race([stream.next(), timeout]);
          if (r.done) throw new Error(`WatchNodes ended before ${what}`);
          if (match(r.value.nodes.map((n) => n.name))) return;
        } finally {
          clearTimeout(timer);
        }
      }
    },
    async close() {
      abort.abort();
      await stream.return?.().catch(() => undefined);
    },
  };
}
