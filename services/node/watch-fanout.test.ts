import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { type Session, SessionSchema } from "../../gen/staragent/v1/session_pb.js";
import { WatchEventType, type WatchSessionsResponse } from "../../gen/staragent/v1/session_service_pb.js";
import { sameModel } from "./status/same-model.js";
import { WatchFanout } from "./watch-fanout.js";

const session = (tmux: string, paneTitle = ""): Session =>
  create(SessionSchema, { name: `nodes/n1/sessions/${tmux}`, node: "n1", tmuxSession: tmux, paneTitle });
const model = (...sessions: Session[]) => new Map(sessions.map((s) => [s.tmuxSession, s]));
const plain = (e: WatchSessionsResponse) => [
  WatchEventType[e.type],
  e.sessions.map((s) => `${s.tmuxSession}${s.paneTitle ? `:${s.paneTitle}` : ""}`),
  e.removedNames,
];

/** Reads what a stream has queued, without waiting for more. */
async function take(stream: AsyncGenerator<WatchSessionsResponse>, count: number) {
  const out: WatchSessionsResponse[] = [];
  for (let i = 0; i < count; i++) {
    const next = await stream.next();
    if (next.done) break;
    out.push(next.value);
  }
  return out.map(plain);
}

describe("WatchFanout", () => {
  it("streams a snapshot, then what changed between published models, and ends on abort", async () => {
    const fanout = new WatchFanout("n1");
    const stop = new AbortController();
    let joined = 0;
    const stream = fanout.stream(model(session("a")), stop.signal, () => joined++);
    expect(await take(stream, 1)).toEqual([["SNAPSHOT", ["a"], []]]);
    expect([joined, fanout.size]).toEqual([1, 1]);
    const a = session("a");
    fanout.publish(model(a, session("b")));
    // The first model published is the base: nothing is sent for it.
    fanout.publish(model(a, session("b", "titled")));
    fanout.publish(model(a));
    fanout.heartbeat();
    expect(await take(stream, 3)).toEqual([
      ["UPSERTED", ["b:titled"], []],
      ["REMOVED", [], ["nodes/n1/sessions/b"]],
      ["HEARTBEAT", [], []],
    ]);
    stop.abort();
    expect((await stream.next()).done).toBe(true);
    expect(fanout.size).toBe(0);
  });

  it("sends nothing for a model equal to the one before, and says so through sameModel", async () => {
    const fanout = new WatchFanout("n1");
    const stop = new AbortController();
    const stream = fanout.stream(model(), stop.signal, () => undefined);
    await take(stream, 1);
    fanout.publish(model(session("a")));
    fanout.publish(model(session("a")));
    expect(sameModel(model(session("a")), model(session("a")))).toBe(true);
    expect(sameModel(model(session("a")), model(session("a", "other")))).toBe(false);
    fanout.closeAll();
    expect(await take(stream, 5)).toEqual([]);
  });

  it("cuts off a watcher that fell too far behind with RESOURCE_EXHAUSTED", async () => {
    const fanout = new WatchFanout("n1");
    const stream = fanout.stream(model(), new AbortController().signal, () => undefined);
    await take(stream, 1);
    fanout.publish(model());
    for (let i = 0; i <= 1_001; i++) fanout.heartbeat();
    expect(fanout.size).toBe(0);
    let failure: unknown;
    try {
      for (;;) if ((await stream.next()).done) break;
    } catch (err) {
      failure = err;
    }
    expect(ConnectError.from(failure).code).toBe(Code.ResourceExhausted);
  });
});
