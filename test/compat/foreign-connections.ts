import { readFileSync } from "node:fs";
import { socketInodes } from "./process-tree.js";

/** An IPv6 address of all zeros: an unconnected or listening socket has it as its remote end. */
const ANY_V6 = "0".repeat(32);
/** `::1` as /proc/net/tcp6 prints it (four 32-bit words in host byte order). */
const LOOPBACK_V6 = "00000000000000000000000001000000";
/** The prefix of an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) in /proc/net/tcp6. */
const V4_MAPPED_PREFIX = "0000000000000000FFFF0000";

/**
 * The TCP connections held by `pids` whose remote end is neither loopback nor unset, as
 * `pid -> address:port` lines: the CLIs under test must talk to the mock on 127.0.0.1 only.
 */
export function foreignConnections(pids: readonly number[]): string[] {
  const remoteByInode = new Map<string, string>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      const remote = fields[2];
      const inode = fields[9];
      if (remote && inode) remoteByInode.set(inode, remote);
    }
  }
  const foreign: string[] = [];
  for (const pid of pids) {
    for (const inode of socketInodes(pid)) {
      const remote = remoteByInode.get(inode);
      if (remote !== undefined && !isLocalRemote(remote)) foreign.push(`${pid} -> ${describeRemote(remote)}`);
    }
  }
  return foreign;
}

function isLocalRemote(remote: string): boolean {
  const [address = "", port = ""] = remote.split(":");
  if (/^0+$/.test(port)) return true;
  if (address.length === 8) return address.slice(6, 8) === "7F" || address === "00000000";
  if (address === ANY_V6 || address === LOOPBACK_V6) return true;
  return address.startsWith(V4_MAPPED_PREFIX) && address.slice(30, 32) === "7F";
}

function describeRemote(remote: string): string {
  const [address = "", port = "0"] = remote.split(":");
  const portNumber = Number.parseInt(port, 16);
  if (address.length === 8) {
    const octets = [6, 4, 2, 0].map((i) => Number.parseInt(address.slice(i, i + 2), 16));
    return `${octets.join(".")}:${portNumber}`;
  }
  return `[${address}]:${portNumber}`;
}
