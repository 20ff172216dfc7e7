import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Connectivity } from "../../gen/staragent/v1/node_service_pb.js";
import { WatchEventType } from "../../gen/staragent/v1/session_service_pb.js";
import {
  type AttachResponse,
  type ConnectRequest,
  ConnectRequestSchema,
  TerminalStream,
} from "../../gen/staragent/v1/terminal_stream_pb.js";
import { NODE_PING_INTERVAL_MS, NODE_PING_TIMEOUT_MS } from "../../services/hub/node-connection.js";
import { type InProcessHubOnly, openPtyMasters, startInProcessHubFor, tmuxClients } from "../support/in-process-hub.js";
import { type ServerProcess, startServerProcess } from "../support/servers.js";
import { TestViewer } from "../support/test-viewer.js";
import { createTestTmux, type TestTmux } from "../support/tmux.js";
import { waitFor } from "../support/wait.js";
import { grpcClient, testToken } from "./hub-fixture.js";
import { readWatch } from "./watch-events.js";

/** A shell with a fixed prompt and no rc files, so screens are predictable. */
const SHELL = ["env", "PS1=READY> ", "bash", "--norc", "--noprofile"];
/**
 * How long a killed or paused Node may take to end the streams through the Hub. A paused one is found
 * by the keepalive PING (sent after NODE_PING_INTERVAL_MS without data, dead after NODE_PING_TIMEOUT_MS
 * unanswered: 7 s); the rest is slack for timers late on a loaded 2-core machine (a CI run took over
 * 10 s). Nothing else would end the streams sooner than minutes (TCP, the 120 s idle timeout).
 */
const NODE_LOSS_MS = NODE_PING_INTERVAL_MS + NODE_PING_TIMEOUT_MS + 13_000;
/** Output the stalled-viewer test sends past the stalled viewer: twice the Node's high watermark. */
const FLOOD_BYTES = 256 * 1024;
/** How long a Node may take to end its attachments once their caller is gone. */
const NODE_CLEANUP_MS = 10_000;

async function shellSession(tmux: TestTmux, name: string): Promise<void> {
  await tmux.run("new-session", "-d", "-s", name, "-x", "80", "-y", "24", "--", ...SHELL);
  await waitFor(async () => (await tmux.run("capture-pane", "-p", "-t", `=${name}:`)).includes("READY>"), "the prompt");
}

/** Error lines a server process logged (a caller going away is not one). */
function errorLines(server: ServerProcess): string[] {
  return server
    .stderr()
    .split("\n")
    .filter((l) => / ERROR /.test(l));
}

describe("faults on the way through the Hub", () => {
  const nodeToken = testToken();
  let nodeTmux: TestTmux;
  let node: ServerProcess;
  let nodePort: number;
  let f: InProcessHubOnly | undefined;
  const hub = () => f as InProcessHubOnly;

  const startNode = (port = 0) =>
    startServerProcess({
      kind: "node",
      tmuxSocket: nodeTmux.socketName,
      token: nodeToken,
      args: ["--name", "w1", "--port", String(port)],
    });

  beforeAll(async () => {
    nodeTmux = createTestTmux();
    await shellSession(nodeTmux, "work");
    node = await startNode();
    nodePort = Number(new URL(node.url).port);
    f = await startInProcessHubFor([{ id: "w1", url: node.url }], nodeToken);
    await waitFor(
      async () => (await hub().nodes.getNode({ name: "nodes/w1" })).node?.connectivity === Connectivity.ONLINE,
      "w1 ONLINE",
    );
  });

  afterAll(async () => {
    node?.process.kill("SIGCONT");
    await f?.close();
    await node?.stop();
    await nodeTmux?.close();
  });

  /** Waits until the Hub holds nothing for its callers. */
  async function hubHoldsNothing(): Promise<void> {
    await waitFor(() => {
      const held = hub().hub.terminal.held;
      return held.attachments + held.reserved + held.relays === 0;
    }, "the Hub to hold nothing");
  }

  /**
   * With a viewer attached and a watcher listening through the Hub, sends `signal` to w1: the viewer's
   * stream ends UNAVAILABLE naming w1, the watcher hears w1 unreachable, and the Hub holds nothing.
   */
  async function nodeLostMidStream(signal: NodeJS.Signals): Promise<void> {
    const viewer = await TestViewer.attach(hub().terminal, { name: "nodes/w1/sessions/work" });
    const watch = readWatch((s) => hub().sessions.watchSessions({ parent: "nodes/-" }, { signal: s }));
    try {
      await watch.next((e) => e.type === WatchEventType.SNAPSHOT, "the snapshot");
      const sent = Date.now();
      node.process.kill(signal);
      await waitFor(() => viewer.ended, "the viewer's stream to end", NODE_LOSS_MS);
      // A paused Node still holds its connection open: only the PING's timeout can have ended it.
      if (signal === "SIGSTOP") expect(Date.now() - sent).toBeGreaterThanOrEqual(NODE_PING_TIMEOUT_MS);
      const err = ConnectError.from(viewer.error);
      expect([Code[err.code], err.rawMessage]).toEqual(["Unavailable", expect.stringMatching(/^node w1 /)]);
      expect(
        (await watch.next((e) => e.type === WatchEventType.UNREACHABLE_CHANGED, "w1 unreachable")).unreachable,
      ).toEqual(["nodes/w1"]);
      await hubHoldsNothing();
    } finally {
      viewer.close();
      await watch.close();
    }
  }

  /** Waits for w1 to be ONLINE again and checks a new viewer works end to end. */
  async function attachWorks(): Promise<void> {
    await waitFor(
      async () => (await hub().nodes.getNode({ name: "nodes/w1" })).node?.connectivity === Connectivity.ONLINE,
      "w1 ONLINE",
      NODE_LOSS_MS,
    );
    const viewer = await TestViewer.attach(hub().terminal, { name: "nodes/w1/sessions/work" });
    try {
      await viewer.type("echo back-$((6*7))\r");
      await viewer.waitForOutput("back-42");
    } finally {
      viewer.close();
    }
  }

  it("ends viewers and watchers clearly when the Node is killed mid-stream, and takes it back", async () => {
    await nodeLostMidStream("SIGKILL");
    // The Node's tmux clients died with it (their ptys closed).
    await waitFor(async () => (await tmuxClients(nodeTmux)) === 0, "no tmux client left on w1", NODE_CLEANUP_MS);
    node = await startNode(nodePort);
    await attachWorks();
  });

  it("ends viewers clearly when the Node is paused mid-stream; the Node lets go of them once resumed", async () => {
    try {
      await nodeLostMidStream("SIGSTOP");
    } finally {
      node.process.kill("SIGCONT");
    }
    await waitFor(async () => (await tmuxClients(nodeTmux)) === 0, "w1 to end the old attachment", NODE_CLEANUP_MS);
    await attachWorks();
    expect(errorLines(node)).toEqual([]);
  });

  it("keeps other viewers and the Hub's memory fine while one viewer stops reading", async () => {
    // The stalled viewer reads its first event and then nothing, ever.
    const stalledAbort = new AbortController();
    const stalled = hub()
      .terminal.attach({ name: "nodes/w1/sessions/work", cols: 80, rows: 24 }, { signal: stalledAbort.signal })
      [Symbol.asyncIterator]();
    const first = await stalled.next();
    expect((first.value as AttachResponse).event.case).toBe("attached");
    const good = await TestViewer.attach(hub().terminal, { name: "nodes/w1/sessions/work" });
    try {
      const rssBefore = process.memoryUsage().rss;
      const before = good.totalBytes;
      // Full-screen output until far more than every buffer on the stalled viewer's way (its HTTP/2
      // windows, the Node's 128 KiB flow-control mark) has gone to the other viewer.
      await good.type("yes stall-flood-line\r");
      await waitFor(() => good.totalBytes - before > FLOOD_BYTES, "the flood to reach the other viewer", 30_000);
      await good.type("\x03");
      await good.type("echo still-$((1+1))\r");
      await good.waitForOutput("still-2");
      // What the stalled viewer did not read waits in bounded buffers (flow control), not in the Hub.
      expect(process.memoryUsage().rss - rssBefore).toBeLessThan(64 * 1024 * 1024);
    } finally {
      good.close();
      stalledAbort.abort();
    }
    await hubHoldsNothing();
    await waitFor(async () => (await tmuxClients(nodeTmux)) === 0, "w1 to end both attachments", NODE_CLEANUP_MS);
  });
});

describe("a Hub killed with viewers attached to a Node's session", () => {
  const nodeToken = testToken();
  let nodeTmux: TestTmux;
  let hubTmux: TestTmux;
  let node: ServerProcess;
  let hub: ServerProcess | undefined;

  beforeAll(async () => {
    nodeTmux = createTestTmux();
    hubTmux = createTestTmux();
    await shellSession(nodeTmux, "work");
    node = await startServerProcess({
      kind: "node",
      tmuxSocket: nodeTmux.socketName,
      token: nodeToken,
      args: ["--name", "w2"],
    });
  });

  afterAll(async () => {
    await hub?.stop();
    await node?.stop();
    await nodeTmux?.close();
    await hubTmux?.close();
  });

  const startHub = () =>
    startServerProcess({
      kind: "hub",
      tmuxSocket: hubTmux.socketName,
      token: testToken(),
      args: ["--node", `w2=${node.url}`],
      env: { STARAGENT_NODE_TOKEN: nodeToken },
    });

  it("leaves no tmux client or pty on the Node, and a restarted Hub attaches again", async () => {
    const ptysBefore = await openPtyMasters(node.process.pid as number);
    hub = await startHub();
    const terminal = grpcClient(TerminalStream, hub.url, hub.token);
    const viewers = [
      await TestViewer.attach(terminal, { name: "nodes/w2/sessions/work" }),
      await TestViewer.attach(terminal, { name: "nodes/w2/sessions/work" }),
    ];
    const requests = (async function* (): AsyncGenerator<ConnectRequest> {
      yield create(ConnectRequestSchema, {
        message: { case: "attach", value: { name: "nodes/w2/sessions/work", cols: 80, rows: 24 } },
      });
      await new Promise(() => undefined);
    })();
    const bidi = terminal.connect(requests)[Symbol.asyncIterator]();
    await bidi.next();
    await waitFor(async () => (await tmuxClients(nodeTmux)) === 3, "three tmux clients on w2");

    hub.process.kill("SIGKILL");
    await hub.stop();
    for (const v of viewers) v.close();
    await bidi.return?.().catch(() => undefined);

    await waitFor(async () => (await tmuxClients(nodeTmux)) === 0, "w2 to end every attachment", NODE_CLEANUP_MS);
    await waitFor(
      async () => (await openPtyMasters(node.process.pid as number)) === ptysBefore,
      "w2 to close every pty",
    );
    expect(errorLines(node)).toEqual([]);

    hub = await startHub();
    const again = await TestViewer.attach(grpcClient(TerminalStream, hub.url, hub.token), {
      name: "nodes/w2/sessions/work",
    });
    try {
      await again.type("echo after-restart-$((3*3))\r");
      await again.waitForOutput("after-restart-9");
    } finally {
      again.close();
    }
  });
});
