import { randomBytes } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { Connectivity } from "../../gen/staragent/v1/node_service_pb.js";
import {
  type AckOutputRequest,
  type AttachRequest,
  type AttachResponse,
  AttachResponseSchema,
  type ConnectRequest,
  type ConnectResponse,
  ConnectResponseSchema,
  ExitCause,
  type ResizeTerminalRequest,
  type SendInputRequest,
  type TerminalStream,
} from "../../gen/staragent/v1/terminal_stream_pb.js";
import { openConnect } from "../common/connect-stream.js";
import { principalKey } from "../common/context-keys.js";
import { onAbort } from "../common/disposables.js";
import type { Logger } from "../common/log.js";
import { parseSessionName } from "../common/resource-names.js";
import { WakeSignal } from "../common/wake-signal.js";
import { forCaller } from "./node-client.js";
import type { NodeEntry, NodeRegistry } from "./node-registry.js";

/** Attachments one Hub caller (a browser login or a token holder) may hold across all nodes. */
export const MAX_HUB_ATTACHMENTS_PER_CALLER = 32;
/** Bytes of randomness in a Hub attachment id: unguessable, like the Nodes' own. */
const HUB_ATTACHMENT_ID_BYTES = 16;
/**
 * How long a stopping Hub waits for its viewers to take their `exited` event: a viewer that stopped
 * reading must not hold up the shutdown.
 */
const CLOSE_GRACE_MS = 2_000;

/** How a relay was ended by the Hub itself rather than by its node or its caller. */
type RelayEnding =
  | { readonly kind: "exited"; readonly reason: string }
  | { readonly kind: "error"; readonly error: ConnectError };

/** One stream the Hub relays (Attach or Connect), from its start to its end. */
interface Relay {
  readonly node: NodeEntry;
  /** Aborts the call to the node: the caller went away, or the Hub ends the relay (`ending`). */
  readonly stop: AbortController;
  ending: RelayEnding | undefined;
  /** Resolves once the relay's generator has finished. */
  readonly finished: Promise<void>;
  finish(): void;
}

/** An attachment the Hub relays: where it lives and who may drive it. */
interface RelayedAttachment {
  readonly node: NodeEntry;
  /** The id the owning node gave it. */
  readonly nodeAttachmentId: string;
  /** The Hub principal that attached; the only one who may drive it. */
  readonly owner: string;
}

/**
 * The Hub's TerminalStream: Attach and Connect go to the node that owns the session (the Hub's own
 * machine in-process, a remote Node over gRPC on one long-lived HTTP/2 stream); SendInput,
 * ResizeTerminal and AckOutput go, by attachment id, to the node holding that attachment. The Hub
 * hands out its own ids and maps them to the node's, so a caller can only drive attachments it made
 * (everyone else gets NOT_FOUND) even though every Hub user reaches a Node with the same node token.
 * A Node's answers reach the caller unchanged; a Node the Hub cannot use is the Hub's error
 * (`NodeRegistry.relayError`). A relay ends when its caller goes away (the call to the node is
 * cancelled with it), when its node's health check finds the node OFFLINE (UNAVAILABLE: a paused
 * Node's stream would otherwise hang), and when the Hub stops (`exited`, then a clean end).
 */
export class HubTerminalProxy implements ServiceImpl<typeof TerminalStream> {
  private readonly attachments = new Map<string, RelayedAttachment>();
  private readonly perCaller = new Map<string, number>();
  private readonly relays = new Set<Relay>();
  private closing = false;

  constructor(
    private readonly registry: NodeRegistry,
    private readonly log: Logger,
    private readonly maxPerCaller = MAX_HUB_ATTACHMENTS_PER_CALLER,
  ) {
    registry.onChange(() => this.endRelaysOfOfflineNodes());
  }

  /**
   * What the Hub holds for its callers (for tests and benchmarks, which check nothing outlives its
   * caller): relayed attachments, streams counted against a caller's limit (open or starting), and
   * relays running.
   */
  get held(): { attachments: number; reserved: number; relays: number } {
    let reserved = 0;
    for (const n of this.perCaller.values()) reserved += n;
    return { attachments: this.attachments.size, reserved, relays: this.relays.size };
  }

  async *attach(req: AttachRequest, ctx: HandlerContext): AsyncGenerator<AttachResponse> {
    const node = this.nodeOf(req.name, "name");
    const owner = this.reserve(ctx);
    const hubId = newId();
    const relay = this.startRelay(node, ctx);
    try {
      for await (const event of node.terminal.attach(req, forCaller(ctx, { signal: relay.stop.signal }))) {
        yield this.relayEvent(event, hubId, node, owner);
      }
    } catch (err) {
      yield this.exitedOrThrow(relay, err);
    } finally {
      this.endRelay(relay, hubId, owner);
    }
  }

  async sendInput(req: SendInputRequest, ctx: HandlerContext) {
    const a = this.find(req.attachmentId, ctx);
    return a.node.terminal.sendInput({ ...req, attachmentId: a.nodeAttachmentId }, forCaller(ctx));
  }

  async resizeTerminal(req: ResizeTerminalRequest, ctx: HandlerContext) {
    const a = this.find(req.attachmentId, ctx);
    return a.node.terminal.resizeTerminal({ ...req, attachmentId: a.nodeAttachmentId }, forCaller(ctx));
  }

  async ackOutput(req: AckOutputRequest, ctx: HandlerContext) {
    const a = this.find(req.attachmentId, ctx);
    await a.node.terminal.ackOutput({ ...req, attachmentId: a.nodeAttachmentId }, forCaller(ctx));
    return {};
  }

  /** Relays a whole Connect stream to the owning node; the first message must be `attach`. */
  async *connect(requests: AsyncIterable<ConnectRequest>, ctx: HandlerContext): AsyncGenerator<ConnectResponse> {
    const { head, attach, rest } = await openConnect(requests);
    const node = this.nodeOf(attach.name, "attach.name");
    const owner = this.reserve(ctx);
    const hubId = newId();
    const relay = this.startRelay(node, ctx);
    const forwarded = (async function* () {
      yield head;
      yield* rest;
    })();
    try {
      for await (const res of node.terminal.connect(forwarded, forCaller(ctx, { signal: relay.stop.signal }))) {
        if (res.message.case === "event") {
          const event = this.relayEvent(res.message.value, hubId, node, owner);
          yield create(ConnectResponseSchema, { message: { case: "event", value: event } });
        } else {
          yield res;
        }
      }
    } catch (err) {
      const exited = this.exitedOrThrow(relay, err);
      yield create(ConnectResponseSchema, { message: { case: "event", value: exited } });
    } finally {
      this.endRelay(relay, hubId, owner);
    }
  }

  /**
   * How a relay whose node call failed ends for its caller: with the Hub's own `exited` (returned, to
   * send) when the Hub ended it so; otherwise with the error the Hub ended it with, or the node's
   * failure as its client relayed it for the caller (thrown).
   */
  private exitedOrThrow(relay: Relay, err: unknown): AttachResponse {
    const ending = relay.ending;
    if (ending?.kind === "exited") return exitedEvent(ending.reason);
    throw ending?.kind === "error" ? ending.error : err;
  }

  /** Frees what a relay holds once its stream ends, however it ends. */
  private endRelay(relay: Relay, hubId: string, owner: string): void {
    this.attachments.delete(hubId);
    this.release(owner);
    relay.finish();
  }

  /**
   * Ends every relay: each viewer gets `exited` with `reason`, then its stream ends cleanly. Refuses
   * new attachments from now on. Resolves once every relay has finished (or after CLOSE_GRACE_MS,
   * for viewers that stopped reading).
   */
  async close(reason: string): Promise<void> {
    this.closing = true;
    const relays = [...this.relays];
    for (const relay of relays) this.end(relay, { kind: "exited", reason });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(relays.map((r) => r.finished)),
      new Promise((resolve) => {
        timer = setTimeout(resolve, CLOSE_GRACE_MS);
      }),
    ]);
    clearTimeout(timer);
  }

  /** Passes an event on, giving `attached` the Hub's id for the attachment (and recording it). */
  private relayEvent(event: AttachResponse, hubId: string, node: NodeEntry, owner: string): AttachResponse {
    if (event.event.case !== "attached") return event;
    this.attachments.set(hubId, { node, nodeAttachmentId: event.event.value.attachmentId, owner });
    this.log.info("relaying an attachment", { node: node.id, attachment: hubId });
    return create(AttachResponseSchema, {
      event: { case: "attached", value: { ...event.event.value, attachmentId: hubId } },
    });
  }

  private nodeOf(name: string, field: string): NodeEntry {
    const { node } = parseSessionName(name, field);
    if (node === "-") {
      throw new ConnectError(
        `${field}: name the session's node (nodes/{node}/sessions/{session}), not '-'`,
        Code.InvalidArgument,
      );
    }
    return this.registry.get(node);
  }

  private find(id: string, ctx: HandlerContext): RelayedAttachment {
    const a = this.attachments.get(id);
    if (!a || a.owner !== ctx.values.get(principalKey).id) {
      throw new ConnectError(
        `attachment ${id.length > 40 ? `${id.slice(0, 40)}…` : id} not found (it ended, or is not yours)`,
        Code.NotFound,
      );
    }
    return a;
  }

  /** Tracks a relay from its start; it stops when its caller goes away or the Hub ends it. */
  private startRelay(node: NodeEntry, ctx: HandlerContext): Relay {
    const stop = new AbortController();
    const unlisten = onAbort(ctx.signal, () => stop.abort());
    const done = new WakeSignal();
    const relay: Relay = {
      node,
      stop,
      ending: undefined,
      finished: done.wait().then(() => undefined),
      finish: () => {
        unlisten();
        this.relays.delete(relay);
        done.wake();
      },
    };
    this.relays.add(relay);
    return relay;
  }

  /** Ends `relay` from the Hub's side. */
  private end(relay: Relay, ending: RelayEnding): void {
    relay.ending ??= ending;
    relay.stop.abort();
  }

  /** A Node found OFFLINE (dead, paused, cut off) ends its relays with a clear error. */
  private endRelaysOfOfflineNodes(): void {
    for (const relay of this.relays) {
      const node = relay.node;
      if (node.local || node.connectivity !== Connectivity.OFFLINE) continue;
      this.end(relay, {
        kind: "error",
        error: new ConnectError(
          `node ${node.id} stopped answering (${node.lastError}); attach again once it is back`,
          Code.Unavailable,
        ),
      });
    }
  }

  private reserve(ctx: HandlerContext): string {
    if (this.closing) throw new ConnectError("the Hub is stopping", Code.Unavailable);
    const owner = ctx.values.get(principalKey).id;
    const held = this.perCaller.get(owner) ?? 0;
    if (held >= this.maxPerCaller) {
      throw new ConnectError(
        `you already hold ${held} terminal attachments through this Hub, the most one caller may hold; close one first`,
        Code.ResourceExhausted,
      );
    }
    this.perCaller.set(owner, held + 1);
    return owner;
  }

  private release(owner: string): void {
    const held = (this.perCaller.get(owner) ?? 1) - 1;
    if (held <= 0) this.perCaller.delete(owner);
    else this.perCaller.set(owner, held);
  }
}

/** The event that ends a relayed stream the Hub itself ends cleanly (the Hub stopping). */
function exitedEvent(reason: string): AttachResponse {
  return create(AttachResponseSchema, {
    event: { case: "exited", value: { reason, sessionEnded: false, cause: ExitCause.SERVER_STOPPING } },
  });
}

function newId(): string {
  return randomBytes(HUB_ATTACHMENT_ID_BYTES).toString("base64url");
}
