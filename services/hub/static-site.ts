import { stat } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { extname, join } from "node:path";
import sirv, { type RequestHandler } from "sirv";
import type { FallbackHandler } from "../common/server.js";

/**
 * The dashboard's Content-Security-Policy: scripts only from the Hub's own files (no inline script, no
 * eval), connections only to the Hub, no framing, no plugins, forms only to the Hub. Inline styles are
 * allowed because xterm.js writes its measured cell sizes and theme into `<style>` elements; styles
 * cannot run code.
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "worker-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join("; ");

const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy": DASHBOARD_CSP,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
};

/** Built files whose names carry a content hash (Vite's `assets/`): cached for a year, never revalidated. */
const HASHED_PREFIX = "/assets/";
const IMMUTABLE_CACHE = "public, max-age=31536000, immutable";
/** Requests for a build's pre-compressed copies by name: they are served only as encodings of their file. */
const COMPRESSED_COPY = /\.(?:br|gz)$/;
/**
 * Everything else (index.html, the service worker, the favicon) is revalidated on every use (its ETag
 * answers 304 when unchanged), so a new build shows at once; unlike no-store, this keeps the page
 * eligible for the back/forward cache.
 */
const NO_CACHE = "no-cache";

/** Dashboard routes answered with index.html (the page routes on its own). */
const APP_ROUTE = /^\/(?:login|nodes|sessions(?:\/[^.]*)?)?\/?$/;
/** Every path that is not a dashboard route: sirv's SPA fallback passes over these (a 404 instead). */
const NOT_APP_ROUTE = new RegExp(`^(?!${APP_ROUTE.source.slice(1, -1)}$)`);

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
  ".webmanifest": "application/manifest+json",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8",
};

type Request = Parameters<FallbackHandler>[0];
type Response = Parameters<FallbackHandler>[1];

/** The built dashboard, served from disk by sirv. */
export interface StaticSite {
  /** True when a built dashboard (index.html) exists. */
  available(): Promise<boolean>;
  /**
   * Answers a GET or HEAD for `pathname` when it is a built file or a dashboard route; false when it
   * is neither (the caller answers 404) or nothing is built.
   */
  serve(req: Request, res: Response, pathname: string): Promise<boolean>;
}

/**
 * Serves `distDir` (the Vite build) with sirv: the `.br` or `.gz` made at build time when the browser
 * accepts it (q-values honoured), an ETag per file and encoding, long caching for hashed assets and
 * revalidation for the rest, index.html for the dashboard's routes (sirv's SPA fallback, for those
 * routes only), and a strict Content-Security-Policy. sirv serves only the files it found in
 * `distDir` when it was made, so no path can reach outside it; a rebuild is noticed by index.html's
 * mtime, and a new sirv is made for it.
 */
export function createStaticSite(distDir: string): StaticSite {
  let handler: RequestHandler | undefined;
  let loadedMtime = -1;

  const current = async (): Promise<RequestHandler | undefined> => {
    const index = await stat(join(distDir, "index.html")).catch(() => undefined);
    if (!index?.isFile()) {
      handler = undefined;
      loadedMtime = -1;
      return undefined;
    }
    if (!handler || index.mtimeMs !== loadedMtime) {
      handler = sirv(distDir, {
        dev: false,
        etag: true,
        brotli: true,
        gzip: true,
        // index.html answers for "/" (and the fallback), found as "/index" plus ".html".
        extensions: ["html"],
        single: "index.html",
        ignores: [NOT_APP_ROUTE.source],
        setHeaders,
      });
      loadedMtime = index.mtimeMs;
    }
    return handler;
  };

  return {
    available: async () => (await current()) !== undefined,
    serve: async (req, res, pathname) => {
      const site = await current();
      if (!site || COMPRESSED_COPY.test(pathname)) return false;
      // sirv picks an encoding by substring; name only those the browser accepts (`br;q=0` refuses).
      const accepted = headerText(req.headers["accept-encoding"]);
      req.headers["accept-encoding"] = ["br", "gzip"].filter((c) => acceptsEncoding(accepted, c)).join(", ");
      let served = true;
      site(req as IncomingMessage, res as ServerResponse, () => {
        served = false;
      });
      return served;
    },
  };
}

/** Our headers on every file sirv sends: the CSP and the others, the content type, the caching. */
function setHeaders(res: ServerResponse, pathname: string): void {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
  // A path without a known extension is a dashboard route, answered with index.html.
  res.setHeader("content-type", CONTENT_TYPES[extname(pathname)] ?? CONTENT_TYPES[".html"] ?? "text/html");
  const hashed = pathname.startsWith(HASHED_PREFIX) && extname(pathname) !== "";
  res.setHeader("cache-control", hashed ? IMMUTABLE_CACHE : NO_CACHE);
  res.setHeader("vary", "accept-encoding");
}

/** Whether an Accept-Encoding header accepts `coding` (with a q-value above 0). */
export function acceptsEncoding(header: string, coding: string): boolean {
  for (const part of header.split(",")) {
    const [name, ...params] = part.trim().toLowerCase().split(";");
    if (name !== coding && name !== "*") continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    return q === undefined || Number(q.slice(2)) > 0;
  }
  return false;
}

function headerText(value: string | string[] | undefined): string {
  return Array.isArray(value) ? value.join(", ") : (value ?? "");
}
