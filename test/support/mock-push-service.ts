import { createDecipheriv, createECDH, createPublicKey, type ECDH, hkdfSync, randomBytes, verify } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** A browser's side of a push subscription, made by the test: what decrypts what is pushed to it. */
export interface TestDevice {
  readonly endpoint: string;
  /** `keys.p256dh` and `keys.auth` as the browser's `PushSubscription.toJSON()` gives them. */
  readonly p256dh: string;
  readonly auth: string;
  readonly ecdh: ECDH;
  readonly authSecret: Buffer;
}

/** One push request the mock received, checked and decrypted. */
export interface ReceivedPush {
  readonly device: string;
  readonly headers: IncomingMessage["headers"];
  /** The VAPID JWT's claims, once its ES256 signature checked out against `vapidKey`. */
  readonly claims: { aud: string; exp: number; sub: string };
  /** The `k` of the Authorization header: the sender's VAPID public key. */
  readonly vapidKey: string;
  /** The decrypted payload (RFC 8291, aes128gcm). */
  readonly plaintext: string;
  /** What the mock answered. */
  readonly status: number;
  /** When the request arrived (performance.now()). */
  readonly at: number;
}

/**
 * A push service on loopback, as a browser vendor's would be (RFC 8030): each device has an endpoint
 * `/push/{device}`. Every request's VAPID JWT (RFC 8292) is verified and its aes128gcm body decrypted
 * with the device's keys (RFC 8291), written here with node:crypto; a request that fails either is
 * answered 400 and kept in `rejected`. Tests choose each device's answers (`answer`).
 */
export class MockPushService {
  readonly received: ReceivedPush[] = [];
  readonly rejected: Array<{ device: string; reason: string }> = [];
  private readonly devices = new Map<string, TestDevice>();
  private readonly answers = new Map<string, number[]>();
  private readonly listeners = new Set<() => void>();
  private server: Server | undefined;
  private base = "";

  /** Starts listening on 127.0.0.1 (a free port). */
  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const status = this.handle(req, Buffer.concat(chunks));
        res.writeHead(status).end();
        for (const l of [...this.listeners]) l();
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  /** The origin of the push service (the JWT's `aud` must be it). */
  get origin(): string {
    return this.base;
  }

  /** A new device with its own P-256 key pair and auth secret, subscribed at `/push/{id}`. */
  device(id: string): TestDevice {
    const ecdh = createECDH("prime256v1");
    ecdh.generateKeys();
    const authSecret = randomBytes(16);
    const device: TestDevice = {
      endpoint: `${this.base}/push/${id}`,
      p256dh: ecdh.getPublicKey().toString("base64url"),
      auth: authSecret.toString("base64url"),
      ecdh,
      authSecret,
    };
    this.devices.set(id, device);
    return device;
  }

  /** The statuses the device's next requests are answered with, in order; 201 after them. */
  answer(id: string, ...statuses: number[]): void {
    this.answers.set(id, [...(this.answers.get(id) ?? []), ...statuses]);
  }

  /** The pushes a device received so far, decrypted. */
  pushesTo(id: string): ReceivedPush[] {
    return this.received.filter((p) => p.device === id);
  }

  /** Resolves with the first received push (from now on or already in) that `match` takes. */
  waitFor(match: (p: ReceivedPush) => boolean, what: string, timeoutMs = 15_000): Promise<ReceivedPush> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.received.find(match);
        if (!found) return false;
        done();
        resolve(found);
        return true;
      };
      const timer = setTimeout(() => {
        done();
        reject(
          new Error(
            `no push ${what} within ${timeoutMs} ms; received: ${this.received.map((p) => `${p.device} ${p.plaintext}`).join(" | ")}; rejected: ${JSON.stringify(this.rejected)}`,
          ),
        );
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.listeners.delete(check);
      };
      if (!check()) this.listeners.add(check);
    });
  }

  private handle(req: IncomingMessage, body: Buffer): number {
    const at = performance.now();
    const id = /^\/push\/([^/]+)$/.exec(req.url ?? "")?.[1] ?? "";
    const device = this.devices.get(id);
    if (req.method !== "POST" || !device) return this.reject(id, `no device at ${req.method} ${req.url}`, 404);
    let claims: ReceivedPush["claims"];
    let vapidKey: string;
    let plaintext: string;
    try {
      ({ claims, vapidKey } = verifyVapid(req.headers.authorization ?? "", this.base));
      if (req.headers["content-encoding"] !== "aes128gcm") throw new Error("Content-Encoding is not aes128gcm");
      if (!req.headers.ttl) throw new Error("no TTL header");
      plaintext = decryptAes128gcm(body, device);
    } catch (err) {
      return this.reject(id, err instanceof Error ? err.message : String(err), 400);
    }
    const status = this.answers.get(id)?.shift() ?? 201;
    this.received.push({ device: id, headers: req.headers, claims, vapidKey, plaintext, status, at });
    return status;
  }

  private reject(device: string, reason: string, status: number): number {
    this.rejected.push({ device, reason });
    return status;
  }
}

/**
 * Checks `Authorization: vapid t=<JWT>, k=<public key>` (RFC 8292): an ES256 JWT signed by that key,
 * for this push service's origin, not expired and at most 24 hours ahead, with a mailto: or https: sub.
 */
export function verifyVapid(header: string, audience: string): { claims: ReceivedPush["claims"]; vapidKey: string } {
  const match = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(header);
  if (!match?.[1] || !match[2]) throw new Error(`Authorization is not a VAPID header: ${header.slice(0, 40)}`);
  const [token, vapidKey] = [match[1], match[2]];
  const [head, payload, signature] = token.split(".");
  if (!head || !payload || !signature) throw new Error("the JWT has not three parts");
  const header64 = JSON.parse(Buffer.from(head, "base64url").toString()) as { alg?: string };
  if (header64.alg !== "ES256") throw new Error(`the JWT's alg is ${header64.alg}, not ES256`);
  const point = Buffer.from(vapidKey, "base64url");
  const key = createPublicKey({
    key: {
      kty: "EC",
      crv: "P-256",
      x: point.subarray(1, 33).toString("base64url"),
      y: point.subarray(33, 65).toString("base64url"),
    },
    format: "jwk",
  });
  const signed = verify(
    "sha256",
    Buffer.from(`${head}.${payload}`),
    { key, dsaEncoding: "ieee-p1363" },
    Buffer.from(signature, "base64url"),
  );
  if (!signed) throw new Error("the JWT's signature does not verify with k");
  const claims = JSON.parse(Buffer.from(payload, "base64url").toString()) as ReceivedPush["claims"];
  if (claims.aud !== audience) throw new Error(`the JWT's aud is ${claims.aud}, not ${audience}`);
  const now = Date.now() / 1000;
  if (!(claims.exp > now && claims.exp <= now + 24 * 3600 + 60))
    throw new Error(`the JWT's exp ${claims.exp} is out of range`);
  if (!/^(mailto:|https:)/.test(claims.sub)) throw new Error(`the JWT's sub ${claims.sub} is not mailto: or https:`);
  return { claims, vapidKey };
}

/**
 * Decrypts an aes128gcm push body (RFC 8188 framing, RFC 8291 keys) as the browser would: the header
 * (salt, record size, the sender's ephemeral public key), then one record whose padding delimiter is 2.
 */
export function decryptAes128gcm(body: Buffer, device: Pick<TestDevice, "ecdh" | "authSecret">): string {
  const salt = body.subarray(0, 16);
  const keyIdLength = body[20] ?? 0;
  const senderKey = body.subarray(21, 21 + keyIdLength);
  if (keyIdLength !== 65) throw new Error(`the key id is ${keyIdLength} bytes, not a 65-byte P-256 key`);
  const record = body.subarray(21 + keyIdLength);
  const shared = device.ecdh.computeSecret(senderKey);
  const keyInfo = Buffer.concat([Buffer.from("WebPush: info\0"), device.ecdh.getPublicKey(), senderKey]);
  const ikm = Buffer.from(hkdfSync("sha256", shared, device.authSecret, keyInfo, 32));
  const cek = Buffer.from(hkdfSync("sha256", ikm, salt, Buffer.from("Content-Encoding: aes128gcm\0"), 16));
  const nonce = Buffer.from(hkdfSync("sha256", ikm, salt, Buffer.from("Content-Encoding: nonce\0"), 12));
  const decipher = createDecipheriv("aes-128-gcm", cek, nonce);
  decipher.setAuthTag(record.subarray(record.length - 16));
  const padded = Buffer.concat([decipher.update(record.subarray(0, record.length - 16)), decipher.final()]);
  let end = padded.length - 1;
  while (end >= 0 && padded[end] === 0) end--;
  if (padded[end] !== 2) throw new Error("the last record's padding delimiter is not 2");
  return padded.subarray(0, end).toString("utf8");
}
