import { randomUUID } from "node:crypto";
import { appendFile, mkdir, mkdtemp, open, readFile, realpath, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { SessionService } from "../gen/staragent/v1/session_service_pb.js";
import { bearerInterceptor } from "../services/common/bearer.js";
import { ClaudeConversations } from "../services/node/agents/claude/claude-conversations.js";
import { encodeProjectDir } from "../services/node/agents/claude/transcript-finder.js";
import { CodexConversations } from "../services/node/agents/codex/codex-conversations.js";
import { startServerProcess } from "../test/support/servers.js";
import { createTestTmux } from "../test/support/tmux.js";

/** Past conversations per CLI (Claude Code transcripts, Codex rollouts): 2 000 in all. */
const PER_CLI = 1_000;
/** Project folders they are spread over. */
const FOLDERS = 20;
/** Days their times are spread over (Codex keeps one folder per day). */
const DAYS = 30;
/** Logs per CLI made 1 GB (sparse files: a recorded conversation, a long gap, the conversation again). */
const HUGE_PER_CLI = 2;
const HUGE_BYTES = 1024 ** 3;
/** Calls timed per case. */
const CALLS = 60;
/** The goal: ListConversations p95 under this. */
const GOAL_P95_MS = 300;
const NODE_TOKEN = "bench-node-token-bench-node-token";
const FIXTURES = join(import.meta.dirname, "../services/node/agents");
/** The folder and id the recorded logs were made with, replaced in each copy. */
const CLAUDE_FIXTURE = {
  file: "claude/fixtures/chat-history/2.1.332/conversation.jsonl",
  cwd: "/tmp/sa-compat-claude-work-a8644f",
  id: "eb68e545-1878-4a93-b770-c735f11438ed",
};
const CODEX_FIXTURE = {
  file: "codex/fixtures/chat-history/0.171.0/conversation.jsonl",
  cwd: "/tmp/sa-compat-codex-work-cEfa7E",
  id: "01a22d4d-8dc4-7712-bcdc-49c54be1b5d6",
};
const DAY_MS = 24 * 3600 * 1000;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function loadAverage(): Promise<string> {
  return (await readFile("/proc/loadavg", "utf8")).split(" ").slice(0, 3).join(" ");
}

async function timed(call: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await call();
  return performance.now() - start;
}

/** Writes `text` at `path`; a huge log gets the same text after a sparse gap, to HUGE_BYTES. */
async function writeLog(path: string, text: string, huge: boolean, mtimeMs: number): Promise<void> {
  await writeFile(path, text);
  if (huge) {
    const file = await open(path, "r+");
    await file.truncate(HUGE_BYTES - text.length - 1);
    await file.close();
    await appendFile(path, `\n${text}`);
  }
  const at = new Date(mtimeMs);
  await utimes(path, at, at);
}

/**
 * ListConversations over 2 000 past conversations (1 000 Claude Code transcripts in 20 project
 * folders, 1 000 Codex rollouts over 30 day folders; 2 of each 1 GB) on a real Node process, called
 * over gRPC: the first call (no summary read yet), then warm calls of every folder and of one
 * folder, paging through all of them, and calls after a conversation grew (its summary read again).
 * Prints p50 / p95 / max per case, the floor (listing the 2 000 files alone, in this process), and
 * the load average.
 */
export async function run(): Promise<void> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), "sa-bench-conversations-")));
  const home = join(dir, "home");
  const tmux = createTestTmux();
  let manager: Http2SessionManager | undefined;
  let node: Awaited<ReturnType<typeof startServerProcess>> | undefined;
  try {
    const folders: string[] = [];
    for (let i = 0; i < FOLDERS; i++) {
      const folder = join(dir, "work", `project-${String(i).padStart(2, "0")}`);
      await mkdir(folder, { recursive: true });
      await mkdir(join(home, ".claude", "projects", encodeProjectDir(folder)), { recursive: true });
      folders.push(folder);
    }
    const claude = await readFile(join(FIXTURES, CLAUDE_FIXTURE.file), "utf8");
    const codex = await readFile(join(FIXTURES, CODEX_FIXTURE.file), "utf8");
    const now = Date.now();
    const setupStart = performance.now();
    const grown: string[] = [];
    for (let i = 0; i < PER_CLI; i++) {
      const folder = folders[i % FOLDERS] as string;
      const mtime = now - ((i * DAYS * DAY_MS) / PER_CLI + 60_000);
      const huge = i < HUGE_PER_CLI;
      const claudeId = randomUUID();
      const claudePath = join(home, ".claude", "projects", encodeProjectDir(folder), `${claudeId}.jsonl`);
      await writeLog(
        claudePath,
        claude.replaceAll(CLAUDE_FIXTURE.cwd, folder).replaceAll(CLAUDE_FIXTURE.id, claudeId),
        huge,
        mtime,
      );
      const day = new Date(mtime);
      const dayDir = join(
        home,
        ".codex",
        "sessions",
        String(day.getFullYear()),
        String(day.getMonth() + 1).padStart(2, "0"),
        String(day.getDate()).padStart(2, "0"),
      );
      await mkdir(dayDir, { recursive: true });
      const codexId = randomUUID();
      const codexPath = join(dayDir, `rollout-${day.toISOString().slice(0, 19).replaceAll(":", "-")}-${codexId}.jsonl`);
      await writeLog(
        codexPath,
        codex.replaceAll(CODEX_FIXTURE.cwd, folder).replaceAll(CODEX_FIXTURE.id, codexId),
        huge,
        mtime - 1_000,
      );
      if (i % 50 === 25) grown.push(claudePath, codexPath);
    }
    console.log(
      `${2 * PER_CLI} conversations (${2 * HUGE_PER_CLI} of 1 GB) in ${FOLDERS} folders written in ${((performance.now() - setupStart) / 1000).toFixed(1)} s`,
    );
    const loadBefore = await loadAverage();
    node = await startServerProcess({
      kind: "node",
      tmuxSocket: tmux.socketName,
      token: NODE_TOKEN,
      env: { HOME: home, CLAUDE_CONFIG_DIR: "", CODEX_HOME: "", XDG_DATA_HOME: "" },
    });
    manager = new Http2SessionManager(node.url);
    const sessions = createClient(
      SessionService,
      createGrpcTransport({
        baseUrl: node.url,
        sessionManager: manager,
        interceptors: [bearerInterceptor(NODE_TOKEN)],
      }),
    );
    const results: [string, number[]][] = [];
    const first = await timed(() => sessions.listConversations({ pageSize: 50 }));
    results.push(["first call, every folder, page of 50 (no summary read yet)", [first]]);
    const folder = folders[7] as string;
    const firstFolder = await timed(() => sessions.listConversations({ cwd: folder, pageSize: 50 }));
    results.push(["first call, one folder, page of 50", [firstFolder]]);

    const every: number[] = [];
    for (let i = 0; i < CALLS; i++) every.push(await timed(() => sessions.listConversations({ pageSize: 50 })));
    results.push(["every folder, page of 50", every]);
    const one: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      one.push(await timed(() => sessions.listConversations({ cwd: folders[i % FOLDERS] as string, pageSize: 50 })));
    }
    results.push(["one folder (20 in turn), page of 50", one]);
    const pages: number[] = [];
    let token = "";
    let listed = 0;
    do {
      const start = performance.now();
      const res = await sessions.listConversations({ pageSize: 100, pageToken: token });
      pages.push(performance.now() - start);
      listed += res.conversations.length;
      token = res.nextPageToken;
    } while (token !== "");
    results.push([`paging through all ${listed}, pages of 100`, pages]);
    const afterGrowth: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      // A conversation goes on: its log grows and becomes the newest, so its summary is read again.
      const path = grown[i % grown.length] as string;
      await appendFile(path, "\n");
      afterGrowth.push(await timed(() => sessions.listConversations({ pageSize: 50 })));
    }
    results.push(["every folder, page of 50, after a conversation grew", afterGrowth]);
    const loadAfter = await loadAverage();

    // The floor: finding the 2 000 logs (readdir and stat of each), which every call does.
    const floor: number[] = [];
    const env = { HOME: home };
    const sources = [new ClaudeConversations(), new CodexConversations()];
    for (let i = 0; i < CALLS; i++) {
      floor.push(await timed(() => Promise.all(sources.map((s) => s.logs(env, undefined)))));
    }
    results.push(["floor: listing the 2 000 log files (readdir + stat), in-process", floor]);

    console.log("case                                                               calls   p50 ms   p95 ms   max ms");
    for (const [name, times] of results) {
      const sorted = [...times].sort((a, b) => a - b);
      console.log(
        `${name.padEnd(66)} ${String(times.length).padStart(5)} ${percentile(sorted, 50).toFixed(1).padStart(8)} ${percentile(sorted, 95).toFixed(1).padStart(8)} ${(sorted.at(-1) ?? 0).toFixed(1).padStart(8)}`,
      );
    }
    const warm = results
      .slice(2, -1)
      .flatMap(([, t]) => t)
      .sort((a, b) => a - b);
    const p95 = percentile(warm, 95);
    console.log(
      `ListConversations p95 over every call after the first: ${p95.toFixed(1)} ms (goal < ${GOAL_P95_MS} ms: ${p95 < GOAL_P95_MS ? "met" : "MISSED"})`,
    );
    console.log(`load average before / after: ${loadBefore} / ${loadAfter}`);
  } finally {
    manager?.abort();
    await node?.stop();
    await tmux.close();
    await rm(dir, { recursive: true, force: true });
  }
}
