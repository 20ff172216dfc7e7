import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import type { Page } from "playwright-core";
import { TerminalStream } from "../gen/staragent/v1/terminal_stream_pb.js";
import { bearerInterceptor } from "../services/common/bearer.js";
import { openPage } from "../test/e2e/support/browser.js";
import { type DashboardFixture, manySessions, startDashboard } from "../test/e2e/support/dashboard-fixture.js";
import { REPO_ROOT, type ServerProcess, startServerProcess } from "../test/support/servers.js";
import { waitFor } from "../test/support/wait.js";
import { apiPath, echoLatency, percentile, SHELL } from "./terminal.bench.js";

/** Keystrokes timed in the page: enough for a stable p99. */
const KEYSTROKES = 300;
/** Page loads timed, with an empty and with a warm cache. */
const LOADS = 10;
/** Sessions listed for the load and status-change figures: the scale. */
const LISTED_SESSIONS = 300;
/** Status changes timed with that many sessions listed (each command makes two: working, then idle). */
const STATUS_FLIPS = 10;
/**
 * How long each command runs: a shell's foreground command is seen by the Node's look at tmux, every 2 s
 * while all sessions are settled, so a shorter one could come and go unseen.
 */
const FLIP_COMMAND = "sleep 3";
/** Chunks the build splits off for libraries; everything else is the dashboard's own code. */
const VENDOR_CHUNK = /^assets\/(framework|rpc|xterm|hljs|markdown|diff)-/;
const NODE_TOKEN = "bench-dashboard-node-token";

const fmt = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : "n/a");
const kB = (bytes: number) => (bytes / 1000).toFixed(1);

/** Sizes of the build as sent (the pre-compressed .gz where one exists). */
async function bundleSizes(): Promise<{
  all: number;
  firstParty: number;
  initial: number;
  files: Array<[string, number]>;
}> {
  const dist = join(REPO_ROOT, "web/dist");
  const index = await readFile(join(dist, "index.html"), "utf8");
  const initialFiles = new Set([
    "index.html",
    ...[...index.matchAll(/(?:src|href)="\/(assets\/[^"]+)"/g)].map((m) => m[1] as string),
  ]);
  const files: Array<[string, number]> = [];
  const walk = async (dir: string, prefix: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const rel = `${prefix}${e.name}`;
      if (e.isDirectory()) await walk(join(dir, e.name), `${rel}/`);
      else if (!/\.(gz|br)$/.test(e.name) && /\.(js|css|html)$/.test(e.name)) {
        const gz = await stat(join(dir, `${e.name}.gz`)).catch(() => undefined);
        files.push([rel, gz?.size ?? (await stat(join(dir, e.name))).size]);
      }
    }
  };
  await walk(dist, "");
  files.sort((a, b) => b[1] - a[1]);
  const sum = (list: Array<[string, number]>) => list.reduce((n, [, size]) => n + size, 0);
  return {
    all: sum(files),
    firstParty: sum(files.filter(([f]) => !VENDOR_CHUNK.test(f))),
    initial: sum(files.filter(([f]) => initialFiles.has(f))),
    files,
  };
}

/**
 * Pause between timed keystrokes: far longer than an echo takes, so each key's echo is timed alone, and
 * nothing polls the page meanwhile (polling from the test would compete with the page for its thread).
 */
const KEY_GAP_MS = 60;

/** Keystroke echo in the page: from the keydown event to the echoed byte written into xterm.js. */
async function pageEcho(page: Page): Promise<number[]> {
  await page.locator("sa-terminal .xterm").click();
  const read = () =>
    page.evaluate(() =>
      (document.querySelector("sa-terminal") as unknown as { echoSamples: number[] }).echoSamples.slice(),
    );
  const before = (await read()).length;
  const letters = "abcdefghijklmnopqrstuvwxyz";
  for (let i = 0; i < KEYSTROKES; i += 25) {
    await page.keyboard.press("Control+U");
    await page.keyboard.press("Control+L");
    await new Promise((r) => setTimeout(r, KEY_GAP_MS * 3));
    for (let j = i; j < Math.min(KEYSTROKES, i + 25); j++) {
      await page.keyboard.press(letters[j % letters.length] as string);
      await new Promise((r) => setTimeout(r, KEY_GAP_MS));
    }
  }
  await waitFor(async () => (await read()).length >= before + KEYSTROKES * 0.95, "the echoes to be timed");
  return (await read()).slice(before).sort((a, b) => a - b);
}

/** Milliseconds from navigation start to the first session list on screen, per load. */
async function loadTimes(f: DashboardFixture, page: Page, cold: boolean): Promise<number[]> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Network.setCacheDisabled", { cacheDisabled: cold });
  const times: number[] = [];
  for (let i = 0; i < LOADS; i++) {
    await page.goto(`${f.hub.url}/`);
    const t = await page.waitForFunction(
      () => performance.getEntriesByName("staragent:first-session-list")[0]?.startTime,
      undefined,
      {
        polling: 5,
      },
    );
    times.push(Number(await t.jsonValue()));
  }
  return times.sort((a, b) => a - b);
}

/**
 * The dashboard's figures: the bundle as sent, load to the first session list, keystroke echo in the
 * page through the Hub (beside the Node API's in the same run), and the cost of one status change with
 * 300 sessions listed. A real Hub, a real Node and chromium, as in the end-to-end tests.
 */
export async function run(): Promise<void> {
  const sizes = await bundleSizes();
  console.log("| bundle (gzip) | kB | goal |\n|---|---|---|");
  console.log(`| everything | ${kB(sizes.all)} | < 200 |`);
  console.log(`| first-party code (dashboard + generated API) | ${kB(sizes.firstParty)} | < 50 |`);
  console.log(`| loaded before the first session list | ${kB(sizes.initial)} | |`);
  for (const [file, size] of sizes.files) console.log(`|   ${file} | ${kB(size)} | |`);

  const f = await startDashboard();
  let node: ServerProcess | undefined;
  try {
    node = await startServerProcess({
      kind: "node",
      tmuxSocket: f.tmux.socketName,
      token: NODE_TOKEN,
      args: ["--name", "bench"],
    });
    for (const s of ["echo-page", "echo-api"]) {
      await f.tmux.run("new-session", "-d", "-s", s, "-x", "120", "-y", "40", "--", ...SHELL);
    }
    await waitFor(
      async () => (await f.tmux.run("capture-pane", "-p", "-t", "=echo-api:")).includes("READY>"),
      "a prompt",
    );
    const { page, context } = await openPage(f.browser, { viewport: { width: 1280, height: 900 } });
    await f.login(page, "/sessions/local/echo-page");
    await page.locator("sa-terminal .conn-state.tone-ok").waitFor({ timeout: 20_000 });
    const inPage = await pageEcho(page);
    const client = createClient(
      TerminalStream,
      createGrpcTransport({
        baseUrl: node.url,
        nodeOptions: { noDelay: true } as Record<string, unknown>,
        interceptors: [bearerInterceptor(NODE_TOKEN)],
      }),
    );
    const api = await apiPath(client, "nodes/bench/sessions/echo-api");
    const nodeApi = await echoLatency(api);
    api.close();
    console.log(
      "\n| keystroke echo (ms) | in the page, through the Hub | Node API (Attach + SendInput), same run | goal (page) |",
    );
    console.log("|---|---|---|---|");
    console.log(`| p50 | ${fmt(percentile(inPage, 50))} | ${fmt(percentile(nodeApi, 50))} | < 8 |`);
    console.log(`| p99 | ${fmt(percentile(inPage, 99))} | ${fmt(percentile(nodeApi, 99))} | < 30 |`);

    await f.tmux.run(...manySessions(LISTED_SESSIONS));
    await f.tmux.run("new-session", "-d", "-s", "flipper", "-x", "120", "-y", "40", "--", ...SHELL);
    await page.goto(`${f.hub.url}/`);
    await waitFor(
      async () =>
        (await page.locator("sa-session-list .vlist-inner").getAttribute("aria-label"))?.startsWith(
          `Sessions, ${LISTED_SESSIONS + 3} shown`,
        ),
      "every session listed",
      120_000,
    );
    const cold = await loadTimes(f, page, true);
    const warm = await loadTimes(f, page, false);
    console.log(`\n| load to the first session list, ${LISTED_SESSIONS + 3} sessions (ms) | median | worst | goal |`);
    console.log("|---|---|---|---|");
    console.log(
      `| empty cache, ${LOADS} loads | ${fmt(percentile(cold, 50))} | ${fmt(cold.at(-1) ?? Number.NaN)} | < 500 |`,
    );
    console.log(
      `| warm cache, ${LOADS} loads | ${fmt(percentile(warm, 50))} | ${fmt(warm.at(-1) ?? Number.NaN)} | < 500 |`,
    );

    await page.locator('sa-session-list .row-session[data-key="nodes/local/sessions/bulk-001"]').waitFor();
    const applied = () =>
      page.evaluate(() =>
        (document.querySelector("sa-app") as unknown as { applySamples: number[] }).applySamples.slice(),
      );
    const start = (await applied()).length;
    for (let i = 0; i < STATUS_FLIPS; i++) {
      const n = (await applied()).length;
      await f.typeLine("flipper", FLIP_COMMAND);
      await waitFor(async () => (await applied()).length >= n + 2, "working, then idle again", 20_000);
    }
    const samples = (await applied()).slice(start).sort((a, b) => a - b);
    console.log(
      `\n| one status change applied with ${LISTED_SESSIONS + 3} sessions listed (ms) | p50 | p95 | max | goal |`,
    );
    console.log("|---|---|---|---|---|");
    console.log(
      `| event received → list updated (${samples.length} events) | ${fmt(percentile(samples, 50))} | ${fmt(percentile(samples, 95))} | ${fmt(samples.at(-1) ?? Number.NaN)} | < 16 |`,
    );
    await context.close();
  } finally {
    await node?.stop();
    await f.close();
  }
}
