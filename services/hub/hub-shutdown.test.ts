import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConnectRequest, ConnectRequestSchema, ExitCause } from "../../gen/staragent/v1/terminal_stream_pb.js";
import { type InProcessHub, startInProcessHub, tmuxClients } from "../../test/support/in-process-hub.js";
import { TestViewer } from "../../test/support/test-viewer.js";
import { waitFor } from "../../test/support/wait.js";

let f: InProcessHub;

beforeAll(async () => {
  f = await startInProcessHub();
  await f.local.tmux.run("new-session", "-d", "-s", "here", "sleep 600");
  await f.far.tmux.run("new-session", "-d", "-s", "there", "sleep 600");
});

afterAll(async () => {
  await f?.close();
});

/** A bidi Connect viewer: its events' cases in order, and how its stream ended. */
function connectViewer(name: string) {
  const seen: string[] = [];
  const state: { error: unknown; ended: boolean; reason: string } = { error: undefined, ended: false, reason: "" };
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const requests = (async function* (): AsyncGenerator<ConnectRequest> {
    yield create(ConnectRequestSchema, { message: { case: "attach", value: { name, cols: 80, rows: 24 } } });
    await held;
  })();
  const done = (async () => {
    try {
      for await (const res of f.terminal.connect(requests)) {
        if (res.message.case !== "event") continue;
        const event = res.message.value.event;
        seen.push(event.case ?? "");
        if (event.case === "exited") state.reason = event.value.reason;
      }
    } catch (err) {
      state.error = err;
    } finally {
      state.ended = true;
      release();
    }
  })();
  return { seen, state, done };
}

describe("a Hub that stops gracefully", () => {
  it("ends every viewer with `exited` and a clean end, and leaves no tmux client behind", async () => {
    const viewers = [
      await TestViewer.attach(f.terminal, { name: "nodes/local/sessions/here" }),
      await TestViewer.attach(f.terminal, { name: "nodes/far/sessions/there" }),
    ];
    const bidi = [connectViewer("nodes/local/sessions/here"), connectViewer("nodes/far/sessions/there")];
    await waitFor(() => bidi.every((b) => b.seen.includes("attached")), "the Connect viewers to attach");
    await waitFor(
      async () => (await tmuxClients(f.local.tmux)) === 2 && (await tmuxClients(f.far.tmux)) === 2,
      "every tmux client",
    );

    await f.hub.close();

    await waitFor(() => viewers.every((v) => v.ended), "the Attach viewers' streams to end");
    for (const v of viewers) {
      expect(v.error).toBeUndefined();
      expect(v.events.at(-1)?.event).toMatchObject({ case: "exited", value: { reason: "the Hub is stopping" } });
      expect(v.events.at(-1)?.event).toMatchObject({ value: { cause: ExitCause.SERVER_STOPPING } });
    }
    await Promise.all(bidi.map((b) => b.done));
    for (const b of bidi) {
      expect([b.state.error, b.seen.at(-1), b.state.reason]).toEqual([undefined, "exited", "the Hub is stopping"]);
    }
    await waitFor(
      async () => (await tmuxClients(f.local.tmux)) === 0 && (await tmuxClients(f.far.tmux)) === 0,
      "no tmux client left",
    );
  });
});
