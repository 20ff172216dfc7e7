import { randomBytes } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import {
  type AckOutputRequest,
  type AttachRequest,
  type AttachResponse,
  AttachResponseSchema,
  type ConnectRequest,
  type ConnectResponse,
  ConnectResponseSchema,
  type ResizeTerminalRequest,
  type SendInputRequest,
  type TerminalStream,
} from "../../gen/staragent/v1/terminal_stream_pb.js";
import { principalKey } from "../common/context-keys.js";
import type { Logger } from "../common/log.js";
import { parseSessionName } from "../node/index.js";
import { type NodeEntry, type NodeRegistry, relayError } from "./node-registry.js";

/** Attachments one Hub caller (a browser login or a token holder) may hold across all nodes. */
export const MAX_HUB_ATTACHMENTS_PER_CALLER = 32;
/** Bytes of randomness in a Hub attachment id: unguessable, like the Nodes' own. */
const HUB_ATTACHMENT_ID_BYTES = 16;

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
 * Node errors reach the caller unchanged (`relayError`).
 */
export class HubTerminalProxy implements ServiceImpl<typeof TerminalStream> {
  private readonly attachments = new Map<string, RelayedAttachment>();
  private readonly perCaller = new Map<string, number>();

  constructor(
    private readonly registry: NodeRegistry,
    private readonly log: Logger,
    private readonly maxPerCaller = MAX_HUB_ATTACHMENTS_PER_CALLER,
  ) {}

  /**
   * What the Hub holds for its callers (for tests and benchmarks, which check nothing outlives its
   * caller): relayed attachments, and streams counted against a caller's limit (open or starting).
   */
  get held(): { attachments: number; reserved: number } {
    let reserved = 0;
    for (const n of this.perCaller.values()) reserved += n;
    return { attachments: this.attachments.size, reserved };
  }

  async *attach(req: AttachRequest, ctx: HandlerContext): AsyncGenerator<AttachResponse> {
    const node = this.nodeOf(req.name, "name");
    const owner = this.reserve(ctx);
    const hubId = newId();
    try {
      for await (const event of node.terminal.attach(req, { signal: ctx.signal })) {
        yield this.relayEvent(event, hubId, node, owner);
      }
    } catch (err) {
      this.registry.markResult(node.id, err);
      throw relayError(node, err);
    } finally {
      this.attachments.delete(hubId);
      this.release(owner);
    }
  }

  async sendInput(req: SendInputRequest, ctx: HandlerContext) {
    const a = this.find(req.attachmentId, ctx);
    return this.call(a, () =>
      a.node.terminal.sendInput({ ...req, attachmentId: a.nodeAttachmentId }, { signal: ctx.signal }),
    );
  }

  async resizeTerminal(req: ResizeTerminalRequest, ctx: HandlerContext) {
    const a = this.find(req.attachmentId, ctx);
    return this.call(a, () =>
      a.node.terminal.resizeTerminal({ ...req, attachmentId: a.nodeAttachmentId }, { signal: ctx.signal }),
    );
  }

  async ackOutput(req: AckOutputRequest, ctx: HandlerContext) {
    const a = this.find(req.attachmentId, ctx);
    await this.call(a, () =>
      a.node.terminal.ackOutput({ ...req, attachmentId: a.nodeAttachmentId }, { signal: ctx.signal }),
    );
    return {};
  }

  /** Relays a whole Connect stream to the owning node; the first message must be `attach`. */
  async *connect(requests: AsyncIterable<ConnectRequest>, ctx: HandlerContext): AsyncGenerator<ConnectResponse> {
    const iterator = requests[Symbol.asyncIterator]();
    const head = await iterator.next();
    if (head.done || head.value.message.case !== "attach") {
      throw new ConnectError("the first message of Connect must be 'attach'", Code.InvalidArgument);
    }
    const first = head.value;
    const node = this.nodeOf(head.value.message.value.name, "attach.name");
    const owner = this.reserve(ctx);
    const hubId = newId();
    const forwarded = (async function* () {
      yield first;
      yield* { [Symbol.asyncIterator]: () => iterator };
    })();
    try {
      for await (const res of node.terminal.connect(forwarded, { signal: ctx.signal })) {
        if (res.message.case === "event") {
          const event = this.relayEvent(res.message.value, hubId, node, owner);
          yield create(ConnectResponseSchema, { message: { case: "event", value: event } });
        } else {
          yield res;
        }
      }
    } catch (err) {
      this.registry.markResult(node.id, err);
      throw relayError(node, err);
    } finally {
      this.attachments.delete(hubId);
      this.release(owner);
    }
  }

  /** Passes an event on, giving `attached` the Hub's id for the attachment (and recording it). */
  private relayEvent(event: AttachResponse, hubId: string, node: NodeEntry, owner: string): AttachResponse {
    if (event.event.case !== "attached") return event;
    this.attachments.set(hubId, { node, nodeAttachmentId: event.event.value.attachmentId, owner });
    this.registry.markResult(node.id);
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

  private async call<T>(a: RelayedAttachment, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      this.registry.markResult(a.node.id, err);
      throw relayError(a.node, err);
    }
  }

  private reserve(ctx: HandlerContext): string {
    const owner = ctx.values.get(principalKey).id;
    const held = this.perCaller.get(owner) ?? 0;
    if (held >= this.maxPerCaller) {
      throw new ConnectError(
        `you already hold ${this.maxPerCaller} terminal attachments, the most allowed; close one first`,
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

function newId(): string {
  return randomBytes(HUB_ATTACHMENT_ID_BYTES).toString("base64url");
}
