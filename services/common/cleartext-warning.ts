import type { Logger } from "./log.js";

/** Bind addresses only this machine can reach. */
const LOOPBACK_BIND = new Set(["::1", "[::1]", "localhost"]);

/**
 * Says, once at start, that a server listening beyond loopback speaks cleartext: tokens and terminal
 * traffic then cross the network unencrypted unless the network itself is private (Tailscale
 * encrypts it) or a TLS proxy is in front.
 */
export function warnIfCleartextBeyondLoopback(host: string, log: Logger): void {
  if (LOOPBACK_BIND.has(host) || host.startsWith("127.")) return;
  log.warn(
    "listening beyond loopback without TLS: tokens and terminals cross the network in cleartext unless it is private (Tailscale) or a TLS proxy is in front ('tailscale serve'); --tls-cert and --tls-key serve HTTPS",
    { host },
  );
}
