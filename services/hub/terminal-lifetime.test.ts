import { once } from "node:events";
import http2 from "node:http2";
import net from "node:net";
import { setTimeout as delay } from "node:timers/promises";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AttachRequestSchema,
  type ConnectRequest,
  ConnectRequestSchema,
} from "../../gen/staragent/v1/terminal_stream_pb.js";
import {
  type InProcessHub,
  openPtyMasters,
  startInProcessHub,
  tmuxClients,
} from "../../test/support/in-process-hub.js";
import { TestViewer } from "../../test/support/test-viewer.js";
import { waitFor } from "../../test/support/wait.js";
import { MAX_ATTACHMENTS_PER_SESSION } from "../node/index.js";

/**
 * An attachment must end when its caller goes away, however it goes, on the Hub's own machine (reached
 * in-process) as on a remote Node. These count what an attachment holds: tmux clients on each private
 * server, pty masters in this process (both servers run here), and the attachment maps of both
 * machines and of the Hub.
 */
let f: InProcessHub;
let ptyBaseline: number;

const TARGETS = [
  { label: "the Hub's own machine", name: "nodes/local/sessions/here" },
  { label: "a remote Node", name: "nodes/far/sessions/there" },
] as const;

/** A Hub limit per caller low enough to reach in a test, above the Node's per-session limit. */
const HUB_LIMIT = 10;
/** How long the abort test's reader dwells on each message, so aborts land while it is busy. */
const SLOW_READER_MS = 5;

beforeAll(async () => {
  f = await startInProcessHub({ maxAttachmentsPerCaller: HUB_LIMIT });
  await f.local.tmux.run("new-session", "-d", "-s", "here", "-x", "80", "-y", "24", "sleep 600");
  await f.far.tmux.run("new-session", "-d", "-s", "there", "-x", "80", "-y", "24", "sleep 600");
  ptyBaseline = await openPtyMasters();
});

afterAll(async () => {
  await f?.close();
});

/** What is still held; all zero once every caller has gone. */
async function held() {
  return {
    localTmuxClients: await tmuxClients(f.local.tmux),
    farTmuxClients: await tmuxClients(f.far.tmux),
    ptyMasters: (await openPtyMasters()) - ptyBaseline,
    localAttachments: f.local.terminal.manager.count,
    farAttachments: f.far.terminal.manager.count,
    hubAttachments: f.hub.terminal.held.attachments,
    hubReserved: f.hub.terminal.held.reserved,
    hubRelays: f.hub.terminal.held.relays,
  };
}

const NOTHING_HELD = {
  localTmuxClients: 0,
  farTmuxClients: 0,
  ptyMasters: 0,
  localAttachments: 0,
  farAttachments: 0,
  hubAttachments: 0,
  hubReserved: 0,
  hubRelays: 0,
};

/** Waits until nothing is held, then checks that a plain attach still works on `name`. */
async function expectNothingLeft(name: string): Promise<void> {
  let last: Awaited<ReturnType<typeof held>> | undefined;
  await waitFor(
    async () => {
      last = await held();
      return JSON.stringify(last) === JSON.stringify(NOTHING_HELD);
    },
    "every attachment to end",
    15_000,
  ).catch(() => undefined);
  expect(last).toEqual(NOTHING_HELD);
  const viewer = await TestViewer.attach(f.terminal, { name });
  viewer.close();
  await waitFor(
    async () => JSON.stringify(await held()) === JSON.stringify(NOTHING_HELD),
    "the check's own viewer to end",
  );
}

function codeOf(err: unknown): string {
  return Code[ConnectError.from(err).code];
}

/** A gRPC message frame (uncompressed) around `bytes`. */
function grpcFrame(bytes: Uint8Array): Buffer {
  const frame = Buffer.alloc(5 + bytes.length);
  frame.writeUInt32BE(bytes.length, 1);
  Buffer.from(bytes).copy(frame, 5);
  return frame;
}

/**
 * Starts `method` over a bare HTTP/2 connection and, once the server has sent response bytes, drops
 * the connection without a word (no RST_STREAM, no GOAWAY): a client that vanished.
 */
async function vanishAfterFirstBytes(method: "Attach" | "Connect", body: Uint8Array): Promise<void> {
  const { hostname, port } = new URL(f.hub.url);
  const socket = net.connect(Number(port), hostname);
  const session = http2.connect(f.hub.url, { createConnection: () => socket });
  session.on("error", () => undefined);
  const stream = session.request({
    ":method": "POST",
    ":path": `/staragent.v1.TerminalStream/${method}`,
    "content-type": "application/grpc",
    te: "trailers",
    authorization: `Bearer ${f.userToken}`,
  });
  stream.on("error", () => undefined);
  stream.write(grpcFrame(body));
  if (method === "Attach") stream.end();
  await once(stream, "data");
  socket.destroy();
  session.destroy();
}

describe.each(TARGETS)("attachments to $label", ({ name }) => {
  it("end when the caller's deadline passes (50 calls with a 1 ms deadline)", async () => {
    const codes = new Set<string>();
    for (let i = 0; i < 50; i++) {
      try {
        for await (const _ of f.terminal.attach({ name, cols: 80, rows: 24 }, { timeoutMs: 1 })) break;
        codes.add("OK");
      } catch (err) {
        codes.add(codeOf(err));
      }
    }
    expect([...codes]).toEqual(["DeadlineExceeded"]);
    await expectNothingLeft(name);
  });

  it("end when callers abort at every point of the attach, on Attach and Connect", async () => {
    for (let i = 0; i < 24; i++) {
      const abort = new AbortController();
      // From before the first message to after it: 0 to 22 ms, through the pty's start.
      const timer = setTimeout(() => abort.abort(), (i % 12) * 2);
      try {
        if (i % 2 === 0) {
          for await (const _ of f.terminal.attach({ name, cols: 80, rows: 24 }, { signal: abort.signal })) {
            await delay(SLOW_READER_MS);
          }
        } else {
          const requests = (async function* (): AsyncGenerator<ConnectRequest> {
            yield create(ConnectRequestSchema, { message: { case: "attach", value: { name, cols: 80, rows: 24 } } });
            await new Promise((r) => abort.signal.addEventListener("abort", r, { once: true }));
          })();
          for await (const _ of f.terminal.connect(requests, { signal: abort.signal })) {
            await delay(SLOW_READER_MS);
          }
        }
      } catch (err) {
        expect(codeOf(err)).toBe("Canceled");
      } finally {
        clearTimeout(timer);
      }
    }
    await expectNothingLeft(name);
  });

  it("end when the client's connection vanishes mid-stream, on Attach and Connect", async () => {
    const attach = toBinary(AttachRequestSchema, create(AttachRequestSchema, { name, cols: 80, rows: 24 }));
    const connect = toBinary(
      ConnectRequestSchema,
      create(ConnectRequestSchema, { message: { case: "attach", value: { name, cols: 80, rows: 24 } } }),
    );
    for (let i = 0; i < 4; i++) {
      await vanishAfterFirstBytes("Attach", attach);
      await vanishAfterFirstBytes("Connect", connect);
    }
    await expectNothingLeft(name);
  });
});

describe("attachment limits", () => {
  it("name the limit that applied: the session's, then the caller's through the Hub", async () => {
    const viewers: TestViewer[] = [];
    try {
      for (let i = 0; i < MAX_ATTACHMENTS_PER_SESSION; i++) {
        viewers.push(await TestViewer.attach(f.terminal, { name: "nodes/local/sessions/here" }));
      }
      const perSession = await TestViewer.attach(f.terminal, { name: "nodes/local/sessions/here" }).catch(
        (e: unknown) => ConnectError.from(e),
      );
      expect([codeOf(perSession), (perSession as ConnectError).rawMessage]).toEqual([
        "ResourceExhausted",
        `session here already has ${MAX_ATTACHMENTS_PER_SESSION} terminal attachments, the most one session may have; close one first`,
      ]);
      while (viewers.length < HUB_LIMIT) {
        viewers.push(await TestViewer.attach(f.terminal, { name: "nodes/far/sessions/there" }));
      }
      const perCaller = await TestViewer.attach(f.terminal, { name: "nodes/far/sessions/there" }).catch((e: unknown) =>
        ConnectError.from(e),
      );
      expect([codeOf(perCaller), (perCaller as ConnectError).rawMessage]).toEqual([
        "ResourceExhausted",
        `you already hold ${HUB_LIMIT} terminal attachments through this Hub, the most one caller may hold; close one first`,
      ]);
    } finally {
      for (const v of viewers) v.close();
    }
    await expectNothingLeft("nodes/local/sessions/here");
  });
});
