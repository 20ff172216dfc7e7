import { Code } from "@connectrpc/connect";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ExitCause } from "../../../gen/staragent/v1/terminal_stream_pb.js";
import { fakeTerminalStream } from "../testing/fake-terminal-stream.js";
import {
  ACK_EVERY_BYTES,
  type CellSize,
  HISTORY_LINES,
  TerminalConnection,
  type TerminalState,
} from "./terminal-connection.js";

const SESSION = "nodes/local/sessions/demo";

/** Every connection a test made, closed after it whether it passed or failed. */
const open: TerminalConnection[] = [];
afterEach(() => {
  for (const c of open.splice(0)) c.close();
});

function connect() {
  const server = fakeTerminalStream();
  const states: TerminalState[] = [];
  const attached: Array<{ history: string; screenLines: number; windowSize: CellSize; sizeOwner: boolean }> = [];
  const output: string[] = [];
  const resized: Array<[CellSize, boolean]> = [];
  const problems: string[] = [];
  const decoder = new TextDecoder();
  const conn = new TerminalConnection({
    client: server.client,
    name: SESSION,
    size: () => ({ cols: 100, rows: 30 }),
    onState: (s) => states.push(s),
    onInputProblem: (m) => problems.push(m),
    sink: {
      attached: (a) =>
        attached.push({
          history: decoder.decode(a.history),
          screenLines: a.screenLines,
          windowSize: a.windowSize,
          sizeOwner: a.sizeOwner,
        }),
      output: (data, done) => {
        output.push(decoder.decode(data));
        done();
      },
      resized: (size, owner) => resized.push([size, owner]),
    },
  });
  open.push(conn);
  return { server, conn, states, attached, output, resized, problems };
}

async function attachedConnection() {
  const t = connect();
  t.conn.start();
  await vi.waitFor(() => expect(t.server.attaches).toHaveLength(1));
  t.server.attaches[0]?.send({
    case: "attached",
    value: {
      attachmentId: "a1",
      windowSize: { cols: 120, rows: 40 },
      history: new TextEncoder().encode("old line\r\n"),
      historyScreenLines: 1,
      sizeOwner: false,
      otherClients: 1,
    },
  });
  await vi.waitFor(() => expect(t.conn.state.kind).toBe("attached"));
  return t;
}

/** The server ends the first attachment with an Exited event. */
function exited(t: ReturnType<typeof connect>, value: { reason: string; sessionEnded: boolean; cause: ExitCause }) {
  t.server.attaches[0]?.send({ case: "exited", value });
}

describe("TerminalConnection", () => {
  it("attaches at the viewer's size with the history asked for, and hands the attachment to the view", async () => {
    const t = await attachedConnection();
    expect(t.server.attaches[0]?.request).toMatchObject({
      name: SESSION,
      cols: 100,
      rows: 30,
      historyLines: HISTORY_LINES,
    });
    expect(t.attached).toEqual([
      { history: "old line\r\n", screenLines: 1, windowSize: { cols: 120, rows: 40 }, sizeOwner: false },
    ]);
    expect(t.states.map((s) => s.kind)).toEqual(["connecting", "attached"]);
  });

  it("holds typed bytes until the attachment is confirmed, then sends them in sequence", async () => {
    const t = connect();
    t.conn.start();
    t.conn.type(new TextEncoder().encode("ls"));
    expect(t.conn.pendingInputBytes).toBe(2);
    await vi.waitFor(() => expect(t.server.attaches).toHaveLength(1));
    expect(t.server.inputs).toEqual([]);
    t.server.attaches[0]?.send({ case: "attached", value: { attachmentId: "a1", windowSize: { cols: 80, rows: 24 } } });
    await vi.waitFor(() => expect(t.server.inputs).toHaveLength(1));
    expect(t.server.inputs[0]).toMatchObject({ attachmentId: "a1", sequence: 1 });
    expect(new TextDecoder().decode(t.server.inputs[0]?.data)).toBe("ls");
    t.conn.type(new TextEncoder().encode("\r"));
    await vi.waitFor(() => expect(t.server.inputs).toHaveLength(2));
    expect(t.server.inputs[1]).toMatchObject({ attachmentId: "a1", sequence: 2 });
  });

  it("acknowledges output once 8 KiB of it has been written, with the newest sequence", async () => {
    const t = await attachedConnection();
    const stream = t.server.attaches[0];
    const chunk = "x".repeat(ACK_EVERY_BYTES / 2);
    stream?.send({ case: "output", value: { sequence: 1, data: new TextEncoder().encode(chunk) } });
    await vi.waitFor(() => expect(t.output).toHaveLength(1));
    expect(t.server.acks).toEqual([]);
    stream?.send({ case: "output", value: { sequence: 2, data: new TextEncoder().encode(chunk) } });
    await vi.waitFor(() => expect(t.server.acks).toHaveLength(1));
    expect(t.server.acks[0]).toMatchObject({ attachmentId: "a1", sequence: 2 });
  });

  it("asks for a size with its attachment and passes the window's answer to the view", async () => {
    const t = await attachedConnection();
    await t.conn.resize({ cols: 90, rows: 20 }, true);
    expect(t.server.resizes[0]).toMatchObject({ attachmentId: "a1", cols: 90, rows: 20, takeOver: true });
    expect(t.resized).toEqual([[{ cols: 90, rows: 20 }, true]]);
  });

  it("stops for good when tmux detached the client, by the exit cause whatever the reason's words", async () => {
    const t = await attachedConnection();
    exited(t, { reason: "detached by another client", sessionEnded: false, cause: ExitCause.CLIENT_DETACHED });
    await vi.waitFor(() => expect(t.conn.state.kind).toBe("ended"));
    expect(t.conn.state).toMatchObject({ kind: "ended", sessionEnded: false });
    expect(t.server.attaches).toHaveLength(1);
  });

  it("stops for good when the session ended", async () => {
    const t = await attachedConnection();
    exited(t, { reason: "session ended", sessionEnded: true, cause: ExitCause.SESSION_ENDED });
    await vi.waitFor(() => expect(t.conn.state).toMatchObject({ kind: "ended", sessionEnded: true }));
  });

  it("attaches again after the server stopping or a detach, though the reason reads like tmux's detach", async () => {
    const t = await attachedConnection();
    exited(t, { reason: "tmux client detached", sessionEnded: false, cause: ExitCause.SERVER_STOPPING });
    t.server.attaches[0]?.end();
    await vi.waitFor(() => expect(t.server.attaches).toHaveLength(2), { timeout: 5_000 });
    expect(t.conn.state.kind).not.toBe("ended");
  });

  it("fails without retrying when the session does not exist", async () => {
    const t = connect();
    t.conn.start();
    await vi.waitFor(() => expect(t.server.attaches).toHaveLength(1));
    t.server.attaches[0]?.fail(Code.NotFound, "no session demo");
    await vi.waitFor(() => expect(t.conn.state.kind).toBe("failed"));
    expect(t.server.attaches).toHaveLength(1);
  });

  it("retries a broken stream, then reattach() attaches again at once", async () => {
    const t = await attachedConnection();
    t.server.attaches[0]?.fail(Code.Unavailable, "connection reset");
    await vi.waitFor(() => expect(t.conn.state.kind).toBe("waiting"));
    t.conn.reattach();
    await vi.waitFor(() => expect(t.server.attaches).toHaveLength(2));
  });
});
