import { X509Certificate } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createSecureContext as createTlsContext } from "node:tls";
import type { ListenerTls } from "./listener.js";

/** Longest certificate or key file read: PEM chains are a few KiB; anything far larger is not one. */
const MAX_PEM_BYTES = 1024 * 1024;

/**
 * Reads a server's certificate and key (`--tls-cert`, `--tls-key`) and checks them before the server
 * listens, so a wrong path, a key that does not belong to the certificate or an expired certificate
 * stops the start with a message naming the file, rather than failing every browser's handshake.
 * Returns undefined when neither is given (cleartext).
 */
export async function readServerTls(
  certFile: string | undefined,
  keyFile: string | undefined,
  now = new Date(),
): Promise<ListenerTls | undefined> {
  if (certFile === undefined && keyFile === undefined) return undefined;
  if (certFile === undefined || keyFile === undefined) {
    throw new Error("--tls-cert and --tls-key go together: give the certificate (PEM) and its private key (PEM)");
  }
  const cert = await readPem(certFile, "--tls-cert");
  const key = await readPem(keyFile, "--tls-key");
  const first = firstCertificate(cert, `--tls-cert ${certFile}`);
  if (new Date(first.validTo).getTime() < now.getTime()) {
    throw new Error(`--tls-cert ${certFile}: the certificate expired on ${first.validTo}; make or get a new one`);
  }
  try {
    createTlsContext({ cert, key });
  } catch (err) {
    throw new Error(
      `--tls-key ${keyFile}: not the private key of the certificate in ${certFile}, or not a PEM key (${errorMessage(err)})`,
    );
  }
  return { cert, key };
}

/**
 * Reads certificates to trust for `https://` Node URLs (`--node-ca`): a self-signed Node certificate,
 * or the CA that signed it, in PEM. They are trusted besides the usual public roots.
 */
export async function readTrustedCertificates(file: string): Promise<string> {
  const pem = (await readPem(file, "--node-ca")).toString("utf8");
  firstCertificate(Buffer.from(pem), `--node-ca ${file}`);
  return pem;
}

async function readPem(file: string, flag: string): Promise<Buffer> {
  let data: Buffer;
  try {
    data = await readFile(file);
  } catch (err) {
    throw new Error(`${flag} ${file}: cannot read it (${errorMessage(err)})`);
  }
  if (data.length > MAX_PEM_BYTES || !data.includes("-----BEGIN ")) {
    throw new Error(`${flag} ${file}: not a PEM file (it should start with -----BEGIN ...)`);
  }
  return data;
}

function firstCertificate(pem: Buffer, what: string): X509Certificate {
  try {
    return new X509Certificate(pem);
  } catch (err) {
    throw new Error(`${what}: not a PEM certificate (${errorMessage(err)})`);
  }
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
