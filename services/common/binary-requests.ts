import { type DescMessage, fromBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Compression, UniversalHandler, UniversalServerRequest } from "@connectrpc/connect/protocol";
import { compressionBrotli, compressionGzip } from "@connectrpc/connect-node";
import { wrapHandler } from "./wrap-handler.js";

/** Envelope flag of a compressed message (gRPC, gRPC-Web, Connect streaming). */
const FLAG_COMPRESSED = 0x01;
/** Bytes before each enveloped message: one flag byte and a 32-bit big-endian length. */
const ENVELOPE_HEADER_BYTES = 5;

/** The binary request encodings: whether messages are enveloped, and the header naming their compression. */
const BINARY_ENCODINGS: ReadonlyArray<{ pattern: RegExp; enveloped: boolean; compressionHeader: string }> = [
  { pattern: /^application\/proto$/, enveloped: false, compressionHeader: "content-encoding" },
  { pattern: /^application\/connect\+proto$/, enveloped: true, compressionHeader: "connect-content-encoding" },
  { pattern: /^application\/grpc(-web)?(\+proto)?$/, enveloped: true, compressionHeader: "grpc-encoding" },
];

const COMPRESSIONS: ReadonlyMap<string, Compression> = new Map([
  [compressionGzip.name, compressionGzip],
  [compressionBrotli.name, compressionBrotli],
]);

/**
 * Makes malformed binary request messages INVALID_ARGUMENT. connect-es decodes binary messages before
 * any interceptor runs and reports a decoding failure as INTERNAL ("parse binary: ..."), which reads as
 * the server's fault; JSON decoding failures are already INVALID_ARGUMENT. Each handler of `handlers`
 * is replaced by one that decodes every binary request message once more on its way in (after its
 * envelope and compression) and fails the request's body with INVALID_ARGUMENT when it does not
 * decode, before connect-es sees that message. Messages over `readMaxBytes` are left to connect-es's
 * own limit.
 */
export function checkBinaryRequests(handlers: UniversalHandler[], readMaxBytes: number): void {
  for (const [i, handler] of handlers.entries()) handlers[i] = withBinaryCheck(handler, readMaxBytes);
}

function withBinaryCheck(handler: UniversalHandler, readMaxBytes: number): UniversalHandler {
  const schema = handler.method.input;
  const checked = (req: UniversalServerRequest) => {
    const mediaType = (req.header.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
    const encoding = BINARY_ENCODINGS.find((e) => e.pattern.test(mediaType));
    if (!encoding || !isByteStream(req.body)) return handler(req);
    const compressionName = req.header.get(encoding.compressionHeader) ?? "identity";
    const compression = COMPRESSIONS.get(compressionName);
    // An encoding connect-es does not accept either: it refuses the request itself.
    if (compressionName !== "identity" && !compression) return handler(req);
    const check = async (bytes: Uint8Array, compressed: boolean) => {
      let message = bytes;
      if (compressed) {
        // Not compressed as announced: connect-es says so itself.
        if (!compression) return;
        try {
          message = await compression.decompress(bytes, readMaxBytes);
        } catch {
          return;
        }
      }
      decodeOrRefuse(schema, message);
    };
    const body = encoding.enveloped
      ? checkEnvelopes(req.body, check, readMaxBytes)
      : checkWhole(req.body, (bytes) => check(bytes, compression !== undefined), readMaxBytes);
    return handler({ ...req, body });
  };
  return wrapHandler(handler, checked);
}

function decodeOrRefuse(schema: DescMessage, bytes: Uint8Array): void {
  try {
    fromBinary(schema, bytes);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new ConnectError(
      `request: not a valid ${schema.typeName} message in protobuf binary (${reason})`,
      Code.InvalidArgument,
    );
  }
}

function isByteStream(body: UniversalServerRequest["body"]): body is AsyncIterable<Uint8Array> {
  return typeof body === "object" && body !== null && Symbol.asyncIterator in body;
}

/** A Connect unary body: one message, checked once whole (bodies over the limit pass unchecked). */
async function* checkWhole(
  body: AsyncIterable<Uint8Array>,
  check: (bytes: Uint8Array) => Promise<void>,
  limit: number,
): AsyncGenerator<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const it = body[Symbol.asyncIterator]();
  for (let r = await it.next(); !r.done; r = await it.next()) {
    chunks.push(r.value);
    size += r.value.byteLength;
    if (size > limit) {
      yield* chunks;
      for (let rest = await it.next(); !rest.done; rest = await it.next()) yield rest.value;
      return;
    }
  }
  await check(Buffer.concat(chunks));
  yield* chunks;
}

/**
 * An enveloped stream of messages: each chunk is passed on once every message it completes was
 * checked, so a bad message fails the body before connect-es reads it.
 */
async function* checkEnvelopes(
  body: AsyncIterable<Uint8Array>,
  check: (bytes: Uint8Array, compressed: boolean) => Promise<void>,
  limit: number,
): AsyncGenerator<Uint8Array> {
  /** The current envelope's bytes received so far. */
  let parts: Uint8Array[] = [];
  let buffered = 0;
  /** The current envelope's size with its header, once the header is known. */
  let expected: number | undefined;
  /** Bytes of a message over the limit still to pass on unkept (connect-es refuses it by its header). */
  let skipping = 0;
  for await (const chunk of body) {
    let rest = chunk;
    while (rest.byteLength > 0) {
      if (skipping > 0) {
        const n = Math.min(skipping, rest.byteLength);
        skipping -= n;
        rest = rest.subarray(n);
        continue;
      }
      const take = rest.subarray(0, (expected ?? ENVELOPE_HEADER_BYTES) - buffered);
      rest = rest.subarray(take.byteLength);
      parts.push(take);
      buffered += take.byteLength;
      if (buffered < (expected ?? ENVELOPE_HEADER_BYTES)) continue;
      const whole = parts.length === 1 ? (parts[0] as Uint8Array) : Buffer.concat(parts);
      parts = [whole];
      if (expected === undefined) {
        const length = Buffer.from(whole.buffer, whole.byteOffset, whole.byteLength).readUInt32BE(1);
        if (length > limit) {
          skipping = length;
          parts = [];
          buffered = 0;
          continue;
        }
        expected = ENVELOPE_HEADER_BYTES + length;
        if (buffered < expected) continue;
      }
      const flags = whole[0] ?? 0;
      if ((flags & ~FLAG_COMPRESSED) === 0) await check(whole.subarray(ENVELOPE_HEADER_BYTES), flags !== 0);
      parts = [];
      buffered = 0;
      expected = undefined;
    }
    yield chunk;
  }
}
