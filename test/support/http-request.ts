import http from "node:http";

/** What an HTTP/1.1 request got back. */
export interface HttpReply {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/**
 * One HTTP/1.1 request on a connection of its own (from `localAddress` when given, so tests that fail
 * logins on purpose keep to addresses of their own); `signal` abandons it.
 */
export function httpRequest(
  url: string,
  options: {
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    localAddress?: string;
    signal?: AbortSignal;
  } = {},
): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: options.method ?? "GET",
      headers: options.headers,
      localAddress: options.localAddress,
      agent: false,
      signal: options.signal,
    });
    req.on("response", (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => {
        body += c;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end(options.body);
  });
}
