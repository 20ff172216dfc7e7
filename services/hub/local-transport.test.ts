import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import {
  SessionService,
  WatchEventType,
  WatchSessionsResponseSchema,
} from "../../gen/staragent/v1/session_service_pb.js";
import { waitFor } from "../../test/support/wait.js";
import { createLocalTransport } from "./local-transport.js";

/**
 * A server stream that sends one event (once `state.gate` opens) and then waits for its caller to go;
 * counts its starts and endings.
 */
function watchingService() {
  const state = { started: 0, ended: 0, gate: Promise.resolve() };
  const transport = createLocalTransport((router) =>
    router.service(SessionService, {
      async *watchSessions(_req, ctx) {
        state.started++;
        try {
          await state.gate;
          yield create(WatchSessionsResponseSchema, { type: WatchEventType.SNAPSHOT });
          await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true }));
        } finally {
          state.ended++;
        }
      },
    }),
  );
  return { state, client: createClient(SessionService, transport) };
}

describe("the Hub's in-process transport", () => {
  it("ends a server stream whose caller gives up before reading its first event", async () => {
    const { state, client } = watchingService();
    for (let i = 0; i < 20; i++) {
      let open = () => {};
      state.gate = new Promise((resolve) => {
        open = resolve;
      });
      const abort = new AbortController();
      const first = client.watchSessions({ parent: "nodes/local" }, { signal: abort.signal })[Symbol.asyncIterator]();
      const read = first.next().catch((e: unknown) => ConnectError.from(e).code);
      // The handler has started but has not answered yet when the caller leaves.
      await waitFor(() => state.started === i + 1, "the handler to start");
      abort.abort();
      open();
      expect(await read).toBe(Code.Canceled);
    }
    await waitFor(() => state.started === 20 && state.ended === 20, "every stream to end");
  });

  it("ends a server stream whose caller aborts while waiting for the next event", async () => {
    const { state, client } = watchingService();
    const abort = new AbortController();
    const stream = client.watchSessions({ parent: "nodes/local" }, { signal: abort.signal })[Symbol.asyncIterator]();
    expect((await stream.next()).done).toBe(false);
    const pending = stream.next().catch((e: unknown) => ConnectError.from(e).code);
    abort.abort();
    expect(await pending).toBe(Code.Canceled);
    await waitFor(() => state.ended === 1, "the stream to end");
  });
});
