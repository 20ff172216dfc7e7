import { create, equals } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { type Session, SessionSchema } from "../../gen/staragent/v1/session_pb.js";
import {
  WatchEventType,
  type WatchSessionsResponse,
  WatchSessionsResponseSchema,
} from "../../gen/staragent/v1/session_service_pb.js";
import { AsyncQueue } from "../common/async-queue.js";
import { onAbort } from "../common/disposables.js";
import { sessionResourceName } from "../common/resource-names.js";

/** Events a slow watcher may have queued before it is cut off (it reconnects and gets a snapshot). */
const MAX_QUEUED_WATCH_EVENTS = 1_000;

/**
 * The watch streams of one machine: each gets a snapshot, then the changes between one model and
 * the next (UPSERTED for new or changed sessions, REMOVED for gone ones) and heartbeats. A watcher
 * that falls too far behind is cut off with RESOURCE_EXHAUSTED rather than buffered without end.
 */
export class WatchFanout {
  private readonly watchers = new Set<AsyncQueue<WatchSessionsResponse>>();
  private model: Map<string, Session> | undefined;

  constructor(private readonly nodeName: string) {}

  /** How many streams are open. */
  get size(): number {
    return this.watchers.size;
  }

  /** The newest model published. */
  get latest(): ReadonlyMap<string, Session> | undefined {
    return this.model;
  }

  /**
   * Streams `snapshot`, then every change published, until `signal` aborts or `closeAll`;
   * `joined` runs once the stream is listening (the watch loop starts).
   */
  async *stream(
    snapshot: ReadonlyMap<string, Session>,
    signal: AbortSignal,
    joined: () => void,
  ): AsyncGenerator<WatchSessionsResponse> {
    const queue = new AsyncQueue<WatchSessionsResponse>();
    queue.push(
      create(WatchSessionsResponseSchema, { type: WatchEventType.SNAPSHOT, sessions: [...snapshot.values()] }),
    );
    this.watchers.add(queue);
    joined();
    const unlisten = onAbort(signal, () => queue.close());
    try {
      yield* queue;
    } finally {
      unlisten();
      this.watchers.delete(queue);
    }
  }

  /** Sends watchers what changed since the model published before (nothing for the first model). */
  publish(model: Map<string, Session>): void {
    const previous = this.model;
    this.model = model;
    if (!previous || this.watchers.size === 0) return;
    const upserted: Session[] = [];
    for (const [name, session] of model) {
      const before = previous.get(name);
      if (!before || (before !== session && !equals(SessionSchema, before, session))) upserted.push(session);
    }
    const removed = [...previous.keys()]
      .filter((name) => !model.has(name))
      .map((name) => sessionResourceName(this.nodeName, name));
    const events: WatchSessionsResponse[] = [];
    if (upserted.length > 0)
      events.push(create(WatchSessionsResponseSchema, { type: WatchEventType.UPSERTED, sessions: upserted }));
    if (removed.length > 0)
      events.push(create(WatchSessionsResponseSchema, { type: WatchEventType.REMOVED, removedNames: removed }));
    this.broadcast(events);
  }

  /** Tells every watcher the stream is alive (proxies close streams that stay quiet). */
  heartbeat(): void {
    this.broadcast([create(WatchSessionsResponseSchema, { type: WatchEventType.HEARTBEAT })]);
  }

  /** Ends every stream. */
  closeAll(): void {
    for (const queue of this.watchers) queue.close();
  }

  private broadcast(events: WatchSessionsResponse[]): void {
    for (const queue of this.watchers) {
      if (queue.size > MAX_QUEUED_WATCH_EVENTS) {
        queue.fail(
          new ConnectError("watcher fell too far behind; watch again for a fresh snapshot", Code.ResourceExhausted),
        );
        this.watchers.delete(queue);
        continue;
      }
      for (const event of events) queue.push(event);
    }
  }
}
