import { Code, ConnectError } from "@connectrpc/connect";
import type { AttachRequest, ConnectRequest } from "../../gen/staragent/v1/terminal_stream_pb.js";

/** A TerminalStream.Connect stream once its opening `attach` has been read. */
export interface OpenedConnect {
  /** The opening message, as it came (the Hub passes it on to the Node). */
  readonly head: ConnectRequest;
  /** What it asks to attach to. */
  readonly attach: AttachRequest;
  /** The messages after it. */
  readonly rest: AsyncIterable<ConnectRequest>;
}

/**
 * Reads the message that must open a Connect stream, for the Node that serves the stream and the Hub
 * that relays it alike: INVALID_ARGUMENT when the stream ends or starts with anything but `attach`.
 */
export async function openConnect(requests: AsyncIterable<ConnectRequest>): Promise<OpenedConnect> {
  const iterator = requests[Symbol.asyncIterator]();
  const head = await iterator.next();
  if (head.done || head.value.message.case !== "attach") {
    throw new ConnectError("the first message of Connect must be 'attach'", Code.InvalidArgument);
  }
  return { head: head.value, attach: head.value.message.value, rest: { [Symbol.asyncIterator]: () => iterator } };
}
