import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { brotliCompress, constants, gzip } from "node:zlib";
import { defineConfig, type Plugin } from "vite";

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

/** Files smaller than this are served as they are: compressing them saves less than the headers cost. */
const MIN_COMPRESS_BYTES = 512;
/** What gets pre-compressed: text formats (images such as PNG are compressed already). */
const COMPRESSIBLE = /\.(js|css|html|svg|json|map|txt|webmanifest)$/;

/**
 * Writes `.gz` and `.br` next to every compressible file of the build, at the highest levels, so the
 * Hub sends compressed files without compressing on each request.
 */
function precompress(): Plugin {
  let outDir = "";
  return {
    name: "staragent-precompress",
    apply: "build",
    configResolved(config) {
      outDir = config.build.outDir;
    },
    async closeBundle() {
      const files = await listFiles(outDir);
      await Promise.all(
        files
          .filter((f) => COMPRESSIBLE.test(f))
          .map(async (file) => {
            const data = await readFile(file);
            if (data.length < MIN_COMPRESS_BYTES) return;
            const [gz, br] = await Promise.all([
              gzipAsync(data, { level: 9 }),
              brotliAsync(data, {
                params: {
                  [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
                  [constants.BROTLI_PARAM_SIZE_HINT]: data.length,
                },
              }),
            ]);
            await Promise.all([writeFile(`${file}.gz`, gz), writeFile(`${file}.br`, br)]);
          }),
      );
    },
  };
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((e) => (e.isDirectory() ? listFiles(join(dir, e.name)) : Promise.resolve([join(dir, e.name)]))),
  );
  return nested.flat();
}

/**
 * The dashboard build: hashed files under `assets/` (cached for a year by the Hub), each library in a
 * chunk of its own so a change to the dashboard does not invalidate them (and the bench can tell the
 * dashboard's own code from theirs), the terminal loaded only when a session is opened and the
 * workspace views' libraries only when their tab is.
 */
export default defineConfig({
  root: import.meta.dirname,
  base: "/",
  publicDir: "public",
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
    assetsInlineLimit: 0,
    reportCompressedSize: false,
    rolldownOptions: {
      // Brotli at its highest level takes seconds on purpose (once per build, for the smallest files).
      checks: { bundlerTimings: false },
      output: {
        codeSplitting: {
          groups: [
            { name: "xterm", test: /node_modules[\\/]@xterm[\\/]/ },
            { name: "framework", test: /node_modules[\\/](lit|lit-html|lit-element|@lit|@lit-labs)[\\/]/ },
            { name: "rpc", test: /node_modules[\\/](@connectrpc|@bufbuild)[\\/]/ },
            // The Changes and Files tabs' libraries, loaded only when one of those tabs opens.
            { name: "hljs", test: /node_modules[\\/]highlight\.js[\\/]/ },
            { name: "markdown", test: /node_modules[\\/](marked|dompurify)[\\/]/ },
            { name: "diff", test: /node_modules[\\/]diff[\\/]/ },
          ],
        },
      },
    },
  },
  server: { host: "127.0.0.1" },
  plugins: [precompress()],
});
