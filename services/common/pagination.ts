import { Code, ConnectError } from "@connectrpc/connect";

/** Page size when the caller asks for none. */
export const DEFAULT_PAGE_SIZE = 500;
/** Largest page a caller may ask for. */
export const MAX_PAGE_SIZE = 1000;

/**
 * Cuts one page out of `items` in the order of `key` (compared by code units; the items are sorted
 * here, since a page continues after the last key returned and any other order would skip items).
 * Page tokens carry the last key returned and the query they belong to, so a token used with another
 * parent or filter is refused rather than silently giving a wrong page.
 */
export function paginate<T>(
  items: readonly T[],
  key: (item: T) => string,
  pageSize: number,
  pageToken: string,
  query: string,
): { page: T[]; nextPageToken: string } {
  if (pageSize < 0 || pageSize > MAX_PAGE_SIZE) {
    throw new ConnectError(`page_size: must be 0 to ${MAX_PAGE_SIZE}`, Code.InvalidArgument);
  }
  const size = pageSize === 0 ? DEFAULT_PAGE_SIZE : pageSize;
  let after = "";
  if (pageToken !== "") {
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(pageToken, "base64url").toString("utf8"));
    } catch {
      parsed = undefined;
    }
    const token = parsed as { q?: unknown; a?: unknown } | undefined;
    if (typeof token?.a !== "string" || token.q !== query) {
      throw new ConnectError(
        "page_token: not a token from an earlier call with the same parent and filter",
        Code.InvalidArgument,
      );
    }
    after = token.a;
  }
  const ordered = [...items].sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  });
  const start = after === "" ? 0 : ordered.findIndex((item) => key(item) > after);
  const rest = start < 0 ? [] : ordered.slice(start);
  const page = rest.slice(0, size);
  const last = page[page.length - 1];
  const nextPageToken =
    rest.length > size && last !== undefined
      ? Buffer.from(JSON.stringify({ q: query, a: key(last) }), "utf8").toString("base64url")
      : "";
  return { page, nextPageToken };
}
