import { createHash } from "node:crypto";
import { readdir, readFile, stat } from "node:fs/promises";
import { extname, join, relative, sep } from "node:path";
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
/**
 * Everything else (index.html, the service worker, the favicon) is revalidated on every use (its ETag
 * answers 304 when unchanged), so a new build shows at once; unlike no-store, this keeps the page
 * eligible for the back/forward cache.
 */
const NO_CACHE = "no-cache";

/** Dashboard routes answered with index.html (the page routes on its own). */
const APP_ROUTE = /^\/(?:login|nodes|sessions(?:\/[^.]*)?)?\/?$/;

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

/** One built file and its pre-compressed variants, held in memory (the whole dashboard is well under 1 MB). */
interface SiteFile {
  readonly type: string;
  readonly etag: string;
  readonly identity: Buffer;
  readonly br: Buffer | undefined;
  readonly gzip: Buffer | undefined;
}

type Request = Parameters<FallbackHandler>[0];
type Response = Parameters<FallbackHandler>[1];

/** The built dashboard, served from memory. */
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
 * Serves `distDir` (the Vite build): the `.br` or `.gz` made at build time when the browser accepts
 * it, an ETag per file, long caching for hashed assets and none for the rest, index.html for the
 * dashboard's routes, and a strict Content-Security-Policy. Only files found in `distDir` when it is
 * read can be served, so no path can reach outside it. A rebuild is noticed by index.html's mtime.
 */
export function createStaticSite(distDir: string): StaticSite {
  let files: Map<string, SiteFile> | undefined;
  let loadedMtime = -1;
  let loading: Promise<Map<string, SiteFile> | undefined> | undefined;

  const current = async (): Promise<Map<string, SiteFile> | undefined> => {
    const index = await stat(join(distDir, "index.html")).catch(() => undefined);
    if (!index?.isFile()) {
      files = undefined;
      loadedMtime = -1;
      return undefined;
    }
    if (files && index.mtimeMs === loadedMtime) return files;
    if (!loading) {
      loading = loadSite(distDir)
        .then((loaded) => {
          files = loaded;
          loadedMtime = index.mtimeMs;
          return loaded;
        })
        .finally(() => {
          loading = undefined;
        });
    }
    return loading;
  };

  return {
    available: async () => (await current()) !== undefined,
    serve: async (req, res, pathname) => {
      const site = await current();
      if (!site) return false;
      const file = site.get(pathname) ?? (APP_ROUTE.test(pathname) ? site.get("/index.html") : undefined);
      if (!file) return false;
      const hashed = pathname.startsWith(HASHED_PREFIX) && site.has(pathname);
      const accepted = headerText(req.headers["accept-encoding"]);
      const [encoding, body] =
        file.br && acceptsEncoding(accepted, "br")
          ? (["br", file.br] as const)
          : file.gzip && acceptsEncoding(accepted, "gzip")
            ? (["gzip", file.gzip] as const)
            : ([undefined, file.identity] as const);
      const etag = `"${file.etag}${encoding ? `-${encoding}` : ""}"`;
      const headers: Record<string, string> = {
        ...SECURITY_HEADERS,
        "content-type": file.type,
        "cache-control": hashed ? IMMUTABLE_CACHE : NO_CACHE,
        vary: "accept-encoding",
        etag,
      };
      if (encoding) headers["content-encoding"] = encoding;
      if (
        headerText(req.headers["if-none-match"])
          .split(/\s*,\s*/)
          .includes(etag)
      ) {
        res.writeHead(304, headers);
        res.end();
        return true;
      }
      headers["content-length"] = String(body.length);
      res.writeHead(200, headers);
      if (req.method === "HEAD") res.end();
      else res.end(body);
      return true;
    },
  };
}

async function loadSite(distDir: string): Promise<Map<string, SiteFile>> {
  const paths = await listFiles(distDir);
  const present = new Set(paths);
  const site = new Map<string, SiteFile>();
  for (const path of paths) {
    if (path.endsWith(".br") || path.endsWith(".gz")) continue;
    const identity = await readFile(path);
    const [br, gzip] = await Promise.all([
      present.has(`${path}.br`) ? readFile(`${path}.br`) : undefined,
      present.has(`${path}.gz`) ? readFile(`${path}.gz`) : undefined,
    ]);
    const url = `/${relative(distDir, path).split(sep).join("/")}`;
    site.set(url, {
      type: CONTENT_TYPES[extname(path)] ?? "application/octet-stream",
      etag: createHash("sha256").update(identity).digest("base64url").slice(0, 22),
      identity,
      br,
      gzip,
    });
  }
  return site;
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((e) => {
      const path = join(dir, e.name);
      if (e.isDirectory()) return listFiles(path);
      return Promise.resolve(e.isFile() ? [path] : []);
    }),
  );
  return nested.flat();
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
