import { hostname, networkInterfaces } from "node:os";

/** Names of this machine every local browser may use. */
const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];
/** Addresses that mean "every interface": the server answers on all of this machine's addresses. */
const WILDCARD_ADDRESSES = new Set(["0.0.0.0", "::", "[::]"]);

/**
 * Parses a list of origins (`https://hub.example.com`, `http://box.tailnet.ts.net:8080`) separated by
 * commas or spaces, as given in STARAGENT_ORIGINS. Throws an Error naming `source` and the entry when
 * one is not an http(s) origin (no path, query or credentials).
 */
export function parseOrigins(value: string, source: string): string[] {
  const origins: string[] = [];
  for (const entry of value.split(/[\s,]+/).filter(Boolean)) {
    let url: URL | undefined;
    try {
      url = new URL(entry);
    } catch {
      url = undefined;
    }
    const bare =
      url &&
      (url.protocol === "http:" || url.protocol === "https:") &&
      url.username === "" &&
      url.password === "" &&
      (url.pathname === "/" || url.pathname === "") &&
      url.search === "" &&
      url.hash === "" &&
      !entry.endsWith("/");
    if (!url || !bare) {
      throw new Error(
        `${source}: ${JSON.stringify(entry)} is not an origin such as https://hub.example.com or http://box:8080`,
      );
    }
    origins.push(url.origin);
  }
  return origins;
}

/**
 * The origins and host names a server answers browsers as. A browser request must name one of them in
 * `Host` (anything else is a page that resolved its own name to this address: DNS rebinding), and a
 * cookie-authenticated call, a login or a logout must come from one of them (`Origin`): never from the
 * request's own `Host`, which the page controls. They are the address the server listens on (every
 * address of this machine and its host name when it listens on all of them), the loopback names,
 * and the origins configured (STARAGENT_ORIGINS: a TLS proxy in front, a DNS name).
 */
export class OwnOrigins {
  private readonly origins = new Set<string>();
  private readonly hosts = new Set<string>();

  constructor(private readonly configured: readonly string[] = []) {
    for (const origin of configured) {
      const url = new URL(origin);
      this.origins.add(url.origin);
      this.addHost(url);
    }
  }

  /** Adds the names of the address the server listens on, with its scheme; call once it listens. */
  bind(address: string, port: number, scheme: "http" | "https" = "http"): void {
    const names = new Set(LOOPBACK_NAMES);
    const bare = address.replace(/^\[|\]$/g, "");
    if (WILDCARD_ADDRESSES.has(address) || WILDCARD_ADDRESSES.has(bare)) {
      for (const list of Object.values(networkInterfaces())) {
        for (const entry of list ?? []) names.add(entry.family === "IPv6" ? `[${entry.address}]` : entry.address);
      }
      names.add(hostname());
    } else {
      names.add(bare.includes(":") ? `[${bare}]` : bare);
    }
    for (const name of names) {
      const url = parseUrl(`${scheme}://${name}:${port}`);
      if (!url) continue;
      this.addHost(url);
      this.origins.add(url.origin);
    }
  }

  /** True when `origin` (an `Origin` header) is one of the server's own. `null` never is. */
  isOwnOrigin(origin: string): boolean {
    const url = parseUrl(origin);
    return url !== undefined && this.origins.has(url.origin);
  }

  /** True when `host` (a `Host` header or HTTP/2 `:authority`) is one of the server's own names. */
  isOwnHost(host: string): boolean {
    if (host === "" || /[/@?#\s]/.test(host)) return false;
    const parts = /^(\[[^\]]*\]|[^:]*)(?::(\d+))?$/.exec(host);
    const url = parts ? parseUrl(`http://${parts[1]}`) : undefined;
    if (!parts || !url) return false;
    return this.hosts.has(parts[2] === undefined ? url.hostname : `${url.hostname}:${Number(parts[2])}`);
  }

  /**
   * Records the `Host` values naming `url`: `name:port`, and the bare name when the port is the
   * scheme's default (browsers leave it out then).
   */
  private addHost(url: URL): void {
    const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port);
    this.hosts.add(`${url.hostname}:${port}`);
    if (url.port === "") this.hosts.add(url.hostname);
  }

  /** A hint for refusals: how to make another name acceptable. */
  get hint(): string {
    return this.configured.length > 0
      ? `STARAGENT_ORIGINS lists ${this.configured.join(", ")}`
      : "start the Hub with STARAGENT_ORIGINS=<origin> to accept another name";
  }
}

function parseUrl(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}
