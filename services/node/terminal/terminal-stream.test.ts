import { readdir, readlink } from "node:fs/promises";
import { type Client, Code, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import * as pty from "node-pty";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ConnectRequest } from "../../../gen/staragent/v1/terminal_stream_pb.js";
import { ExitCause, TerminalStream } from "../../../gen/staragent/v1/terminal_stream_pb.js";
import { expectCode } from "../../../test/support/codes.js";
import { type ServerProcess, startServerProcess } from "../../../test/support/servers.js";
import { TestViewer } from "../../../test/support/test-viewer.js";
import { createTestTmux, type TestTmux } from "../../../test/support/tmux.js";
import { waitFor } from "../../../test/support/wait.js";
import { AsyncQueue } from "../../common/async-queue.js";
import { bearerInterceptor } from "../../common/bearer.js";
import { MAX_ATTACHMENTS_PER_SESSION, MAX_OUTPUT_CHUNK_BYTES, OUTPUT_HIGH_WATERMARK_BYTES } from "./limits.js";

/** A shell with a fixed prompt and no rc files, so screens are predictable. */
const SHELL = ["env", "PS1=READY> ", "bash", "--norc", "--noprofile"];

let tmux: TestTmux;
let node: ServerProcess;
let client: Client<typeof TerminalStream>;
const viewers: TestViewer[] = [];
const ptys: pty.IPty[] = [];

async function newSession(name: string, command = SHELL): Promise<string> {
  await tmux.run("new-session", "-d", "-s", name, "-x", "80", "-y", "24", "--", ...command);
  await waitFor(
    async () => (await tmux.run("capture-pane", "-p", "-t", `=${name}:`)).includes("READY>"),
    `${name}'s prompt`,
  );
  return `nodes/test-node/sessions/${name}`;
}

async function attach(...args: Parameters<typeof TestViewer.attach> extends [unknown, ...infer R] ? R : never) {
  const viewer = await TestViewer.attach(client, ...args);
  viewers.push(viewer);
  return viewer;
}

async function pane(name: string): Promise<string> {
  return tmux.run("capture-pane", "-p", "-J", "-t", `=${name}:`);
}

async function windowSize(name: string): Promise<string> {
  return (await tmux.run("display-message", "-p", "-t", `=${name}:`, "#{window_width}x#{window_height}")).trim();
}

async function clientCount(session: string): Promise<number> {
  const out = await tmux.client.query(["list-clients", "-t", `=${session}`, "-F", "#{client_pid}"]);
  return out.split("\n").filter(Boolean).length;
}

async function openFds(pid: number): Promise<{ total: number; ptys: number }> {
  const entries = await readdir(`/proc/${pid}/fd`);
  let ptyCount = 0;
  for (const e of entries) {
    const target = await readlink(`/proc/${pid}/fd/${e}`).catch(() => "");
    if (target === "/dev/ptmx" || target.startsWith("/dev/pts/")) ptyCount++;
  }
  return { total: entries.length, ptys: ptyCount };
}

async function rssKiB(pid: number): Promise<number> {
  const { readFile } = await import("node:fs/promises");
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
}

function closeAll(): void {
  for (const v of viewers.splice(0)) v.close();
  for (const p of ptys.splice(0)) p.kill();
}

beforeAll(async () => {
  tmux = createTestTmux();
  node = await startServerProcess({
    kind: "node",
    tmuxSocket: tmux.socketName,
    token: "node-token-for-tests",
    args: ["--name", "test-node"],
  });
  const transport = createGrpcTransport({
    baseUrl: node.url,
    interceptors: [bearerInterceptor("node-token-for-tests")],
  });
  client = createClient(TerminalStream, transport);
});

afterEach(() => closeAll());

afterAll(async () => {
  closeAll();
  await node?.stop();
  await tmux?.close();
});

describe("TerminalStream on a Node", () => {
  it("types concurrent inputs in sequence order, once each, and streams numbered output", async () => {
    const name = await newSession("order");
    const viewer = await attach({ name });
    expect(viewer.attached.history.byteLength).toBeGreaterThan(0);
    // The session's window (its one pane) is 24 rows: the screen part of the history.
    expect(viewer.attached.historyScreenLines).toBe(24);
    expect(Buffer.from(viewer.attached.history).toString().split("\r\n").length - 1).toBeGreaterThanOrEqual(24);
    const text = "echo ordered-0123456789abcdefghijklmnopqrstuvwxyz\r";
    const chars = [...text];
    // Every call in flight at once, issued in a shuffled order, so they reach the Node out of order.
    const order = chars.map((_, i) => i).sort((a, b) => ((a * 7919) % 37) - ((b * 7919) % 37));
    const results = await Promise.all(
      order.map((i) =>
        client.sendInput({ attachmentId: viewer.id, sequence: i + 1, data: Buffer.from(chars[i] as string) }),
      ),
    );
    expect(Math.max(...results.map((r) => r.appliedSequence))).toBe(chars.length);
    // A retried call is acknowledged without typing again.
    const again = await client.sendInput({ attachmentId: viewer.id, sequence: 3, data: Buffer.from("X") });
    expect(again.appliedSequence).toBe(chars.length);
    await waitFor(
      async () => (await pane("order")).includes("\nordered-0123456789abcdefghijklmnopqrstuvwxyz"),
      "the echoed line",
    );
    expect(await pane("order")).not.toContain("X");
    await viewer.waitForOutput("ordered-0123456789abcdefghijklmnopqrstuvwxyz");
    expect(viewer.sequences).toEqual(viewer.sequences.map((_, i) => i + 1));
  });

  it("refuses bad input with the right codes", async () => {
    const name = await newSession("bad");
    await expectCode(TestViewer.attach(client, { name: "nodes/test-node/sessions/missing" }), Code.NotFound);
    await expectCode(TestViewer.attach(client, { name: "nodes/other-node/sessions/bad" }), Code.NotFound);
    await expectCode(TestViewer.attach(client, { name, cols: 0 }), Code.InvalidArgument);
    await expectCode(TestViewer.attach(client, { name, rows: 1001 }), Code.InvalidArgument);
    await expectCode(TestViewer.attach(client, { name: "sessions/bad" }), Code.InvalidArgument);
    const viewer = await attach({ name });
    const big = Buffer.alloc(64 * 1024 + 1, 0x61);
    const err = await expectCode(
      client.sendInput({ attachmentId: viewer.id, sequence: 1, data: big }),
      Code.InvalidArgument,
    );
    expect(err.rawMessage).toContain("65536");
    await expectCode(
      client.sendInput({ attachmentId: viewer.id, sequence: 0, data: Buffer.from("a") }),
      Code.InvalidArgument,
    );
    await expectCode(client.sendInput({ attachmentId: "nope", sequence: 1, data: Buffer.from("a") }), Code.NotFound);
    await expectCode(client.resizeTerminal({ attachmentId: viewer.id, cols: 80, rows: 0 }), Code.InvalidArgument);
    const readOnly = await attach({ name, readOnly: true });
    await expectCode(
      client.sendInput({ attachmentId: readOnly.id, sequence: 1, data: Buffer.from("a") }),
      Code.PermissionDenied,
    );
    // Per-session limit: two are open; fill up to the limit, then one more is refused.
    for (let i = 2; i < MAX_ATTACHMENTS_PER_SESSION; i++) await attach({ name });
    await expectCode(TestViewer.attach(client, { name }), Code.ResourceExhausted);
    closeAll();
  });

  it("lets a sole viewer drive the window size, not a viewer among other clients unless it takes over", async () => {
    const name = await newSession("size");
    const viewer = await attach({ name, cols: 100, rows: 30 });
    expect(viewer.attached.sizeOwner).toBe(true);
    await waitFor(async () => (await windowSize("size")) === "100x29", "the window to follow the sole viewer");
    const res = await client.resizeTerminal({ attachmentId: viewer.id, cols: 110, rows: 35 });
    expect(res.sizeOwner).toBe(true);
    await waitFor(async () => (await windowSize("size")) === "110x34", "the window to follow a resize");
    // The user's own terminal attaches (a plain tmux client in a pty).
    const env = { ...tmux.client.environment, TERM: "xterm-256color" };
    const own = pty.spawn("tmux", tmux.client.argv(["attach-session", "-t", "=size"]), {
      cols: 70,
      rows: 20,
      env,
    });
    ptys.push(own);
    await waitFor(async () => (await windowSize("size")) === "70x19", "the window to follow the user's terminal");
    await waitFor(
      () => viewer.events.some((e) => e.event.case === "resized" && !e.event.value.sizeOwner),
      "the viewer to learn it no longer drives the size",
    );
    const refused = await client.resizeTerminal({ attachmentId: viewer.id, cols: 120, rows: 40 });
    expect(refused.sizeOwner).toBe(false);
    expect(refused.windowSize?.cols).toBe(70);
    expect(await windowSize("size")).toBe("70x19");
    // A second viewer neither shrinks nor grows it.
    const second = await attach({ name, cols: 50, rows: 10 });
    expect(second.attached.sizeOwner).toBe(false);
    expect(second.attached.otherClients).toBe(2);
    expect(await windowSize("size")).toBe("70x19");
    const taken = await client.resizeTerminal({ attachmentId: viewer.id, cols: 120, rows: 40, takeOver: true });
    expect(taken.sizeOwner).toBe(true);
    await waitFor(async () => (await windowSize("size")) === "120x39", "the window to take the viewer's size");
    closeAll();
  });

  it("bounds what a viewer that stops acknowledging costs, and Ctrl-C still answers for another viewer", async () => {
    const name = await newSession("flood");
    const stalled = await attach({ name, cols: 120, rows: 40 }, { ack: false });
    const other = await attach({ name, cols: 120, rows: 40 });
    await other.type("yes flooding-the-pane\r");
    await waitFor(() => stalled.totalBytes >= OUTPUT_HIGH_WATERMARK_BYTES, "the stalled viewer to fill its window");
    const rssBefore = await rssKiB(node.process.pid as number);
    const otherBefore = other.totalBytes;
    // The flood keeps going for the other viewer while the stalled one gets nothing more.
    await waitFor(
      () => other.totalBytes > otherBefore + MAX_OUTPUT_CHUNK_BYTES,
      "more output for the other viewer",
      30_000,
    );
    expect(stalled.totalBytes).toBeLessThanOrEqual(OUTPUT_HIGH_WATERMARK_BYTES + MAX_OUTPUT_CHUNK_BYTES);
    const rssAfter = await rssKiB(node.process.pid as number);
    // Output held for the stalled viewer is bounded by the watermark; allow for GC noise only.
    expect(rssAfter - rssBefore).toBeLessThan(16 * 1024);
    await other.type("\x03");
    await waitFor(async () => (await pane("flood")).trimEnd().endsWith("READY>"), "the prompt after Ctrl-C");
    stalled.setAcking(true);
    closeAll();
  });

  it("ends with exited when the session ends", async () => {
    const name = await newSession("ending");
    const viewer = await attach({ name });
    await tmux.run("kill-session", "-t", "=ending");
    await waitFor(() => viewer.ended, "the stream to end");
    const last = viewer.events.at(-1);
    expect(last?.event.case).toBe("exited");
    expect(last?.event.case === "exited" && last.event.value.sessionEnded).toBe(true);
    expect(last?.event.case === "exited" && last.event.value.cause).toBe(ExitCause.SESSION_ENDED);
  });

  it("works over one bidi Connect stream, and closing the request side detaches", async () => {
    const name = await newSession("bidi");
    const requests = new AsyncQueue<ConnectRequest>();
    requests.push({
      $typeName: "staragent.v1.ConnectRequest",
      message: {
        case: "attach",
        value: {
          $typeName: "staragent.v1.AttachRequest",
          name,
          cols: 90,
          rows: 20,
          historyLines: 0,
          takeOver: false,
          readOnly: false,
        },
      },
    });
    const responses = client.connect(requests)[Symbol.asyncIterator]();
    const first = await responses.next();
    expect(first.value?.message.case === "event" && first.value.message.value.event.case).toBe("attached");
    requests.push({
      $typeName: "staragent.v1.ConnectRequest",
      message: {
        case: "input",
        value: {
          $typeName: "staragent.v1.SendInputRequest",
          attachmentId: "",
          sequence: 1,
          data: Buffer.from("echo via-connect-$((6*7))\r"),
        },
      },
    });
    requests.push({
      $typeName: "staragent.v1.ConnectRequest",
      message: {
        case: "resize",
        value: {
          $typeName: "staragent.v1.ResizeTerminalRequest",
          attachmentId: "",
          cols: 100,
          rows: 30,
          takeOver: false,
        },
      },
    });
    let output = "";
    let applied = 0;
    let resized = false;
    while (!(output.includes("via-connect-42") && applied === 1 && resized)) {
      const next = await responses.next();
      if (next.done) throw new Error("the stream ended early");
      const m = next.value.message;
      if (m.case === "inputApplied") applied = m.value.appliedSequence;
      if (m.case === "resizeApplied") resized = m.value.sizeOwner && m.value.windowSize?.cols === 100;
      if (m.case === "event" && m.value.event.case === "output") {
        output += Buffer.from(m.value.event.value.data).toString("utf8");
        requests.push({
          $typeName: "staragent.v1.ConnectRequest",
          message: {
            case: "ack",
            value: {
              $typeName: "staragent.v1.AckOutputRequest",
              attachmentId: "",
              sequence: m.value.event.value.sequence,
            },
          },
        });
      }
    }
    requests.close();
    let exited = false;
    for (;;) {
      const next = await responses.next();
      if (next.done) break;
      if (next.value.message.case === "event" && next.value.message.value.event.case === "exited") exited = true;
    }
    expect(exited).toBe(true);
    await waitFor(async () => (await clientCount("bidi")) === 0, "the tmux client to go");
  });

  it("leaves no pty, fd or tmux client behind after 100 attach/detach cycles", async () => {
    const name = await newSession("cycles");
    const pid = node.process.pid as number;
    const warm = await attach({ name });
    warm.close();
    await waitFor(async () => (await clientCount("cycles")) === 0, "the warm-up client to go");
    const before = await openFds(pid);
    for (let i = 0; i < 100; i++) {
      const viewer = await TestViewer.attach(client, { name });
      viewer.close();
    }
    await waitFor(async () => (await clientCount("cycles")) === 0, "every tmux client to go");
    const after = await waitFor(async () => {
      const fds = await openFds(pid);
      return fds.total <= before.total && fds.ptys === 0 ? fds : undefined;
    }, "the Node's fds to return to where they were");
    expect(after.ptys).toBe(0);
    expect(after.total).toBeLessThanOrEqual(before.total);
  });
});
