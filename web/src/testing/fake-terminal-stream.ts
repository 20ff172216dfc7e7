import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import {
  type AckOutputRequest,
  type AttachRequest,
  type AttachResponse,
  AttachResponseSchema,
  type ResizeTerminalRequest,
  type SendInputRequest,
  TerminalStream,
} from "../../../gen/staragent/v1/terminal_stream_pb.js";

/** One Attach call the fake server is answering: the test pushes its events, ends it or fails it. */
export class FakeAttach {
  private readonly queue: Array<AttachResponse | { error: ConnectError } | "end"> = [];
  private wake: (() => void) | undefined;

  constructor(readonly request: AttachRequest) {}

  /** Sends an event on the stream. */
  send(event: MessageInitShape<typeof AttachResponseSchema>["event"]): void {
    this.push(create(AttachResponseSchema, { event }));
  }

  /** Ends the stream cleanly. */
  end(): void {
    this.push("end");
  }

  /** Ends the stream with an error. */
  fail(code: Code, message: string): void {
    this.push({ error: new ConnectError(message, code) });
  }

  /** The server side of the call. */
  async *run(signal: AbortSignal): AsyncGenerator<AttachResponse> {
    signal.addEventListener("abort", () => this.wake?.());
    for (;;) {
      if (signal.aborted) return;
      const item = this.queue.shift();
      if (item === undefined) {
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
        continue;
      }
      if (item === "end") return;
      if ("error" in item) throw item.error;
      yield item;
    }
  }

  private push(item: AttachResponse | { error: ConnectError } | "end"): void {
    this.queue.push(item);
    this.wake?.();
  }
}

/**
 * A TerminalStream server in the test's process (connect-es's router transport, as its examples test a
 * client): it records every call and lets the test drive each Attach stream.
 */
export function fakeTerminalStream() {
  const attaches: FakeAttach[] = [];
  const inputs: SendInputRequest[] = [];
  const acks: AckOutputRequest[] = [];
  const resizes: ResizeTerminalRequest[] = [];
  const transport = createRouterTransport((router) => {
    router.service(TerminalStream, {
      attach(request, ctx) {
        const a = new FakeAttach(request);
        attaches.push(a);
        return a.run(ctx.signal);
      },
      sendInput(request) {
        inputs.push(request);
        return {};
      },
      ackOutput(request) {
        acks.push(request);
        return {};
      },
      resizeTerminal(request) {
        resizes.push(request);
        return { windowSize: { cols: request.cols, rows: request.rows }, sizeOwner: true };
      },
      connect() {
        throw new ConnectError("not used by the dashboard", Code.Unimplemented);
      },
    });
  });
  return { client: createClient(TerminalStream, transport), attaches, inputs, acks, resizes };
}
