import { mkdir, mkdtemp, rm, utimes, writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { acceptsEncoding, createStaticSite, DASHBOARD_CSP } from "./static-site.js";

const SCRIPT = `console.log(${JSON.stringify("x".repeat(2000))});`;

describe("the Hub's static site (web/dist)", () => {
  let dir: string;
  let server: http.Server;
  let base: string;

  const get = (path: string, headers: Record<string, string> = {}, method = "GET") =>
    new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      const { hostname, port } = new URL(base);
      const req = http.request({ hostname, port, path, method, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      });
      req.on("error", reject);
      req.end();
    });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "sa-site-"));
    await mkdir(join(dir, "assets"));
    await writeFile(join(dir, "index.html"), "<!doctype html><title>StarAgent</title>");
    await writeFile(join(dir, "sw.js"), "self.x = 1;");
    await writeFile(join(dir, "assets", "app-abc123.js"), SCRIPT);
    await writeFile(join(dir, "assets", "app-abc123.js.gz"), gzipSync(SCRIPT));
    await writeFile(join(dir, "assets", "app-abc123.js.br"), brotliCompressSync(SCRIPT));
    const site = createStaticSite(dir);
    server = http.createServer((req, res) => {
      const path = new URL(req.url ?? "/", "http://hub").pathname;
      void site.serve(req, res, path).then((served) => {
        if (!served) {
          res.writeHead(404);
          res.end();
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  it("sends the pre-compressed file the browser accepts, cached for a year when its name is hashed", async () => {
    const br = await get("/assets/app-abc123.js", { "accept-encoding": "gzip, deflate, br" });
    expect(br.status).toBe(200);
    expect(br.headers["content-encoding"]).toBe("br");
    expect(brotliDecompressSync(br.body).toString()).toBe(SCRIPT);
    expect(br.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(br.headers.vary).toBe("accept-encoding");
    expect(br.headers["content-type"]).toBe("text/javascript; charset=utf-8");

    const gz = await get("/assets/app-abc123.js", { "accept-encoding": "gzip" });
    expect(gz.headers["content-encoding"]).toBe("gzip");
    expect(gunzipSync(gz.body).toString()).toBe(SCRIPT);
    const plain = await get("/assets/app-abc123.js", { "accept-encoding": "br;q=0" });
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(plain.body.toString()).toBe(SCRIPT);

    const again = await get("/assets/app-abc123.js", {
      "accept-encoding": "br",
      "if-none-match": String(br.headers.etag),
    });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    expect(br.headers.etag).not.toBe(gz.headers.etag);
  });

  it("answers the dashboard's routes with index.html, never cached, under a strict Content-Security-Policy", async () => {
    for (const path of ["/", "/login", "/nodes", "/sessions/local/fix-bug", "/sessions/w1/x/chat"]) {
      const res = await get(path);
      expect(res.status, path).toBe(200);
      expect(res.body.toString()).toContain("<title>StarAgent</title>");
      expect(res.headers["cache-control"]).toBe("no-cache");
      expect(res.headers["content-security-policy"]).toBe(DASHBOARD_CSP);
      expect(res.headers["x-frame-options"]).toBe("DENY");
    }
    expect(DASHBOARD_CSP).toContain("script-src 'self'");
    expect(DASHBOARD_CSP).toContain("frame-ancestors 'none'");
    expect(DASHBOARD_CSP).not.toMatch(/script-src[^;]*'unsafe-(inline|eval)'/);
    const sw = await get("/sw.js");
    expect(sw.headers["cache-control"]).toBe("no-cache");
    const head = await get("/assets/app-abc123.js", {}, "HEAD");
    expect(head.headers["content-length"]).toBe(String(SCRIPT.length));
    expect(head.body.length).toBe(0);
  });

  it("serves only the files of the build: unknown files and paths out of it are not found", async () => {
    for (const path of [
      "/assets/missing.js",
      "/assets/app-abc123.js.map",
      "/assets/app-abc123.js.gz",
      "/../../etc/passwd",
      "/%2e%2e/%2e%2e/etc/passwd",
      "/x.png",
    ]) {
      expect((await get(path)).status, path).toBe(404);
    }
  });

  it("notices a rebuild", async () => {
    await writeFile(join(dir, "assets", "app-def456.js"), "2");
    expect((await get("/assets/app-def456.js")).status).toBe(404);
    const later = new Date(Date.now() + 5_000);
    await utimes(join(dir, "index.html"), later, later);
    expect((await get("/assets/app-def456.js")).status).toBe(200);
  });
});

describe("acceptsEncoding", () => {
  it("reads Accept-Encoding with q-values", () => {
    expect(acceptsEncoding("gzip, br", "br")).toBe(true);
    expect(acceptsEncoding("gzip;q=0.5", "gzip")).toBe(true);
    expect(acceptsEncoding("br;q=0", "br")).toBe(false);
    expect(acceptsEncoding("*", "br")).toBe(true);
    expect(acceptsEncoding("", "gzip")).toBe(false);
  });
});
