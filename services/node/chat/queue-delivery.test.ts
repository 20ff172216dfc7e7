import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import {
  type Session,
  SessionSchema,
  SessionStatus,
  SessionType,
  StatusReason,
} from "../../../gen/staragent/v1/session_pb.js";
import {
  WatchEventType,
  type WatchSessionsResponse,
  WatchSessionsResponseSchema,
} from "../../../gen/staragent/v1/session_service_pb.js";
import { eachTempDir } from "../../../test/support/temp-dir.js";
import { waitFor } from "../../../test/support/wait.js";
import { createLogger } from "../../common/log.js";
import { MessageQueue, sessionKey } from "./message-queue.js";
import { QueueDelivery } from "./queue-delivery.js";

const log = createLogger("test", "error");

function session(tmuxSession: string, status: SessionStatus, statusReason: StatusReason): Session {
  return create(SessionSchema, {
    tmuxSession,
    type: SessionType.AGENT,
    status,
    statusReason,
    createTime: timestampFromMs(1_700_000_000_000),
  });
}
const idle = (name: string) => session(name, SessionStatus.IDLE, StatusReason.NO_TURN);
const working = (name: string) => session(name, SessionStatus.WORKING, StatusReason.ACTIVE_TURN);

/** A machine's watch streams, each fed by the test: `streams[i]` is the i-th stream opened. */
class Watches {
  readonly streams: { push: (e: WatchSessionsResponse) => void; ended: boolean }[] = [];

  readonly watch = (signal: AbortSignal): AsyncIterable<WatchSessionsResponse> => {
    const pending: WatchSessionsResponse[] = [];
    let wake: (() => void) | undefined;
    const stream = {
      ended: false,
      push: (e: WatchSessionsResponse) => {
        pending.push(e);
        wake?.();
      },
    };
    this.streams.push(stream);
    signal.addEventListener("abort", () => {
      stream.ended = true;
      wake?.();
    });
    return (async function* () {
      while (!signal.aborted) {
        const next = pending.shift();
        if (next) yield next;
        else await new Promise<void>((r) => (wake = r));
      }
    })();
  };
}

const snapshot = (...sessions: Session[]) =>
  create(WatchSessionsResponseSchema, { type: WatchEventType.SNAPSHOT, sessions });
const upserted = (...sessions: Session[]) =>
  create(WatchSessionsResponseSchema, { type: WatchEventType.UPSERTED, sessions });

describe("QueueDelivery", () => {
  let home: string;
  eachTempDir("sa-queue-delivery-", (made) => (home = made));

  it("never types on what an ended watch last said: a session gone busy since waits for a new snapshot", async () => {
    const queue = new MessageQueue(home, log);
    const watches = new Watches();
    const typed: string[] = [];
    const delivery = new QueueDelivery({
      queue,
      watch: watches.watch,
      send: async (name, text) => {
        typed.push(`${name}: ${text}`);
      },
      changed: () => undefined,
      log,
    });
    await delivery.start();
    try {
      // A message for `b` while both sessions are idle: typed, and the watch ends once `b` is busy.
      await queue.add(sessionKey(idle("b")), "for b");
      delivery.queued();
      watches.streams[0]?.push(snapshot(idle("a"), idle("b")));
      await waitFor(() => typed.length === 1, "the message for b typed");
      watches.streams[0]?.push(upserted(working("b")));
      await waitFor(() => watches.streams[0]?.ended, "the watch to end with nothing waiting");
      // `a` starts a turn while nothing watches; then a message is queued for it.
      await queue.add(sessionKey(idle("a")), "for a, after its turn");
      delivery.queued();
      await new Promise((r) => setTimeout(r, 50));
      expect(typed).toEqual(["b: for b"]);
      watches.streams[1]?.push(snapshot(working("a"), working("b")));
      await new Promise((r) => setTimeout(r, 50));
      expect(typed).toEqual(["b: for b"]);
      watches.streams[1]?.push(upserted(idle("a")));
      await waitFor(() => typed.length === 2, "the message for a typed once it is idle");
      expect(typed).toEqual(["b: for b", "a: for a, after its turn"]);
    } finally {
      delivery.close();
    }
  });
});
