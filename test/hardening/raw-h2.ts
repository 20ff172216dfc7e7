import net from "node:net";

/** The HTTP/2 connection preface a client sends first. */
const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
/** Frame types and flags used here (RFC 9113 §6). */
export const FRAME = { HEADERS: 0x1, RST_STREAM: 0x3, SETTINGS: 0x4, GOAWAY: 0x7 } as const;
const FLAG_ACK = 0x1;
const FLAG_END_HEADERS = 0x4;
/** SETTINGS_MAX_CONCURRENT_STREAMS. */
export const SETTING_MAX_CONCURRENT_STREAMS = 0x3;

/** One frame as received. */
export interface Frame {
  readonly type: number;
  readonly flags: number;
  readonly stream: number;
  readonly payload: Buffer;
}

function frame(type: number, flags: number, stream: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(stream & 0x7fffffff, 5);
  return Buffer.concat([head, payload]);
}

/** An HPACK integer with an `n`-bit prefix (RFC 7541 §5.1). */
function hpackInteger(value: number, n: number, first = 0): number[] {
  const max = (1 << n) - 1;
  if (value < max) return [first | value];
  const out = [first | max];
  let rest = value - max;
  while (rest >= 128) {
    out.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
  return out;
}

/** Header fields as HPACK literals without indexing and without Huffman coding: simple, and valid. */
export function hpackLiterals(headers: ReadonlyArray<readonly [string, string]>): Buffer {
  const bytes: number[] = [];
  for (const [name, value] of headers) {
    bytes.push(0x00);
    for (const text of [name, value]) {
      const raw = Buffer.from(text, "latin1");
      bytes.push(...hpackInteger(raw.length, 7), ...raw);
    }
  }
  return Buffer.from(bytes);
}

/**
 * A hand-written HTTP/2 client that sends frames as it is told, whatever the server advertised (a
 * real client would respect SETTINGS_MAX_CONCURRENT_STREAMS): for floods. It answers the server's
 * SETTINGS with an ACK and records every frame the server sends.
 */
export class RawH2 {
  readonly frames: Frame[] = [];
  private pending = Buffer.alloc(0);
  readonly closed: Promise<void>;
  /** Resolves with the server's first SETTINGS frame. */
  readonly settings: Promise<Map<number, number>>;

  private constructor(readonly socket: net.Socket) {
    let resolveSettings!: (s: Map<number, number>) => void;
    this.settings = new Promise((resolve) => {
      resolveSettings = resolve;
    });
    this.closed = new Promise((resolve) => socket.once("close", () => resolve()));
    socket.on("error", () => undefined);
    socket.on("data", (chunk: Buffer) => {
      this.pending = Buffer.concat([this.pending, chunk]);
      while (this.pending.length >= 9) {
        const length = this.pending.readUIntBE(0, 3);
        if (this.pending.length < 9 + length) break;
        const f: Frame = {
          type: this.pending[3] ?? 0,
          flags: this.pending[4] ?? 0,
          stream: this.pending.readUInt32BE(5) & 0x7fffffff,
          payload: this.pending.subarray(9, 9 + length),
        };
        this.pending = this.pending.subarray(9 + length);
        // Payloads of refusals are kept; HEADERS and DATA only counted, so a long flood stays small.
        this.frames.push(f.type === 0x0 || f.type === FRAME.HEADERS ? { ...f, payload: Buffer.alloc(0) } : f);
        if (f.type === FRAME.SETTINGS && (f.flags & FLAG_ACK) === 0) {
          const values = new Map<number, number>();
          for (let i = 0; i + 6 <= f.payload.length; i += 6)
            values.set(f.payload.readUInt16BE(i), f.payload.readUInt32BE(i + 2));
          socket.write(frame(FRAME.SETTINGS, FLAG_ACK, 0, Buffer.alloc(0)));
          resolveSettings(values);
        }
      }
    });
  }

  /** Connects to `port` on loopback and sends the preface and empty SETTINGS. */
  static async connect(port: number, localAddress = "127.0.0.1"): Promise<RawH2> {
    const socket = net.connect({ port, host: "127.0.0.1", localAddress });
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", () => resolve());
      socket.once("error", reject);
    });
    const client = new RawH2(socket);
    socket.write(Buffer.concat([PREFACE, frame(FRAME.SETTINGS, 0, 0, Buffer.alloc(0))]));
    return client;
  }

  /** Sends the headers of a request on `stream` (odd) and nothing more: no body, no end of stream. */
  async headersOnly(stream: number, block: Buffer): Promise<void> {
    if (this.socket.destroyed) return;
    if (!this.socket.write(frame(FRAME.HEADERS, FLAG_END_HEADERS, stream, block))) {
      await new Promise<void>((resolve) => {
        this.socket.once("drain", () => resolve());
        this.socket.once("close", () => resolve());
      });
    }
  }

  /** The error codes of the RST_STREAM frames received, with how many of each. */
  resetCodes(): Map<number, number> {
    const out = new Map<number, number>();
    for (const f of this.frames) {
      if (f.type !== FRAME.RST_STREAM) continue;
      const code = f.payload.readUInt32BE(0);
      out.set(code, (out.get(code) ?? 0) + 1);
    }
    return out;
  }

  close(): void {
    this.socket.destroy();
  }
}
