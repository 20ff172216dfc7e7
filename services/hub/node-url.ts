import { Code, ConnectError } from "@connectrpc/connect";

/** Longest node URL accepted. */
const MAX_URL_LENGTH = 2048;
/** Addresses a server listens on, never one to connect to: a Node given so is a mistake. */
const UNSPECIFIED_HOSTS = new Set(["0.0.0.0", "[::]", "255.255.255.255"]);

/**
 * The URL `AddNode` may store for a Node, or INVALID_ARGUMENT saying what is wrong with it: not a URL,
 * another scheme, credentials in it, port 0, an address nothing can be reached at (0.0.0.0, ::, the
 * broadcast address), or a path, query or fragment (a Node is reached at its origin only; they would
 * be dropped without a word).
 */
export function checkNodeUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConnectError(
      `url: ${JSON.stringify(text.slice(0, 80))} is not a URL (http://host:port)`,
      Code.InvalidArgument,
    );
  }
  if (
    (url.protocol !== "http:" && url.protocol !== "https:") ||
    text.length > MAX_URL_LENGTH ||
    url.username ||
    url.password
  ) {
    throw new ConnectError(
      "url: must be http:// or https:// with a host and port, without credentials",
      Code.InvalidArgument,
    );
  }
  if (url.port === "0") {
    throw new ConnectError(
      "url: port 0 cannot be reached; give the port the Node listens on ('staragent node' prints its URL)",
      Code.InvalidArgument,
    );
  }
  if (UNSPECIFIED_HOSTS.has(url.hostname)) {
    throw new ConnectError(
      `url: ${url.hostname} is an address to listen on, not one to reach a Node at; give the Node's host name or address`,
      Code.InvalidArgument,
    );
  }
  if (url.pathname !== "/" || url.search !== "" || url.hash !== "") {
    throw new ConnectError(
      "url: a Node is reached at its scheme, host and port only; leave out the path, query and fragment",
      Code.InvalidArgument,
    );
  }
  return url;
}
