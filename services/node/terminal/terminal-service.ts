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
} from "../../../gen/staragent/v1/terminal_stream_pb.js";
import { AsyncQueue } from "../../common/async-queue.js";
import { openConnect } from "../../common/connect-stream.js";
import { principalKey } from "../../common/context-keys.js";
import { onAbort } from "../../common/disposables.js";
import type { Logger } from "../../common/log.js";
import { parseSessionName } from "../../common/resource-names.js";
import type { TmuxClient } from "../tmux/client.js";
import type { AttachmentManager } from "./attachment-manager.js";
import type { PtyAttachment } from "./pty-attachment.js";
import { validateAttachmentId, validateHistoryLines, validateInput, validateSize } from "./terminal-requests.js";
import { captureHistory } from "./terminal-tmux.js";

/** What the Node's TerminalStream is built from. */
export interface NodeTerminalServiceOptions {
  /** The node id this machine answers as; other nodes' names are NOT_FOUND. */
  readonly nodeName: string;
  readonly manager: AttachmentManager;
  readonly tmux: TmuxClient;
  readonly log: Logger;
}

/**
 * TerminalStream over one machine's tmux (docs/terminal.md): each Attach or Connect is one attachment,
 * owned by the principal that made it; the unary calls drive it by id. Terminal input and output are
 * never logged.
 */
export class NodeTerminalService implements ServiceImpl<typeof TerminalStream> {
  constructor(private readonly options: NodeTerminalServiceOptions) {}

  async *attach(req: AttachRequest, ctx: HandlerContext): AsyncGenerator<AttachResponse> {
    const { attachment, first } = await this.open(req, ctx, "");
    try {
      yield first;
      yield* attachment.events(ctx.signal);
    } finally {
      await attachment.close("detached");
    }
  }

  async sendInput(req: SendInputRequest, ctx: HandlerContext) {
    const attachment = this.find(req.attachmentId, ctx);
    return { appliedSequence: await this.type(attachment, req, "") };
  }

  async resizeTerminal(req: ResizeTerminalRequest, ctx: HandlerContext) {
    const size = validateSize(req.cols, req.rows);
    const attachment = this.find(req.attachmentId, ctx);
    const outcome = await this.options.manager.resize(attachment, size, req.takeOver);
    return { windowSize: outcome.windowSize, sizeOwner: outcome.sizeOwner };
  }

  async ackOutput(req: AckOutputRequest, ctx: HandlerContext) {
    this.find(req.attachmentId, ctx).ack(req.sequence);
    return {};
  }

  /**
   * The same over one bidi stream. The first message must be `attach`; the attachment id in later
   * messages is implied by the stream (ignored). Closing the request side detaches: the server sends
   * `exited` and ends. A failing input or resize ends the stream with its error.
   */
  async *connect(requests: AsyncIterable<ConnectRequest>, ctx: HandlerContext): AsyncGenerator<ConnectResponse> {
    const { attach, rest } = await openConnect(requests);
    const { attachment, first } = await this.open(attach, ctx, "attach.");
    const out = new AsyncQueue<ConnectResponse>();
    const stop = new AbortController();
    const unlisten = onAbort(ctx.signal, () => stop.abort());
    const pump = (async () => {
      for await (const event of attachment.events(stop.signal)) {
        out.push(create(ConnectResponseSchema, { message: { case: "event", value: event } }));
      }
      out.close();
    })().catch((err) => out.fail(err));
    const reader = (async () => {
      for await (const request of rest) {
        if (stop.signal.aborted) return;
        const m = request.message;
        if (m.case === "input") {
          const appliedSequence = await this.type(attachment, m.value, "input.");
          out.push(create(ConnectResponseSchema, { message: { case: "inputApplied", value: { appliedSequence } } }));
        } else if (m.case === "resize") {
          const size = validateSize(m.value.cols, m.value.rows, "resize.");
          const outcome = await this.options.manager.resize(attachment, size, m.value.takeOver);
          out.push(
            create(ConnectResponseSchema, {
              message: {
                case: "resizeApplied",
                value: { windowSize: outcome.windowSize, sizeOwner: outcome.sizeOwner },
              },
            }),
          );
        } else if (m.case === "ack") {
          attachment.ack(m.value.sequence);
        } else {
          throw new ConnectError("'attach' may only be the first message of Connect", Code.InvalidArgument);
        }
      }
      await attachment.close("detached");
    })().catch((err) => {
      if (!stop.signal.aborted) out.fail(err);
    });
    try {
      yield create(ConnectResponseSchema, { message: { case: "event", value: first } });
      yield* out;
    } finally {
      unlisten();
      stop.abort();
      await attachment.close("detached");
      await Promise.allSettled([pump, reader]);
    }
  }

  /**
   * Validates an attach request, attaches and builds the `attached` event. The attachment ends when
   * the call's signal aborts (the caller went away, its deadline passed, the server stops), whether
   * or not anyone still runs the handler's generator: a transport that stops reading a stream
   * without ending it must not leave a tmux client and a pty behind.
   */
  private async open(
    req: AttachRequest,
    ctx: HandlerContext,
    prefix: string,
  ): Promise<{ attachment: PtyAttachment; first: AttachResponse }> {
    const { node, session } = parseSessionName(req.name, `${prefix}name`);
    if (node !== this.options.nodeName) {
      throw new ConnectError(`node ${node} is not served here (this is node ${this.options.nodeName})`, Code.NotFound);
    }
    const size = validateSize(req.cols, req.rows, prefix);
    const lines = validateHistoryLines(req.historyLines);
    const owner = ctx.values.get(principalKey).id;
    // A viewer without history still gets the live screen; a failed capture is logged, not fatal.
    const captured = await captureHistory(this.options.tmux, session, lines).catch((err: unknown) => {
      this.options.log.warn("could not capture a session's history for a viewer", {
        session,
        error: err instanceof Error ? err.message : String(err),
      });
      return { history: Buffer.alloc(0), screenLines: 0 };
    });
    if (ctx.signal.aborted) throw callerGone(ctx.signal);
    const { attachment, outcome } = await this.options.manager.attach(session, owner, {
      size,
      takeOver: req.takeOver,
      readOnly: req.readOnly,
    });
    await endWithCaller(attachment, ctx.signal);
    const first = create(AttachResponseSchema, {
      event: {
        case: "attached",
        value: {
          attachmentId: attachment.id,
          windowSize: outcome.windowSize,
          history: captured.history,
          historyScreenLines: captured.screenLines,
          sizeOwner: outcome.sizeOwner,
          otherClients: outcome.otherClients,
        },
      },
    });
    return { attachment, first };
  }

  private find(id: string, ctx: HandlerContext): PtyAttachment {
    validateAttachmentId(id);
    return this.options.manager.get(id, ctx.values.get(principalKey).id);
  }

  private type(attachment: PtyAttachment, req: SendInputRequest, prefix: string): Promise<number> {
    if (attachment.readOnly) {
      throw new ConnectError("this attachment is read-only: attach without read_only to type", Code.PermissionDenied);
    }
    validateInput(req.sequence, req.data, prefix);
    return attachment.input.submit(req.sequence, req.data);
  }
}

/**
 * Ties `attachment` to its call: closed once `signal` aborts, and at once (with the call's error) if
 * it already has.
 */
async function endWithCaller(attachment: PtyAttachment, signal: AbortSignal): Promise<void> {
  if (signal.aborted) {
    await attachment.close("detached");
    throw callerGone(signal);
  }
  const unlisten = onAbort(signal, () => void attachment.close("detached"));
  void attachment.closed.then(unlisten);
}

/** The error of a call whose caller went away (its deadline, its abort, the server stopping). */
function callerGone(signal: AbortSignal): ConnectError {
  return signal.reason instanceof ConnectError
    ? signal.reason
    : new ConnectError("the caller went away", Code.Canceled);
}
