import { appendFile, mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterEach, describe, expect, it } from "vitest";
import { ContextWindowSource, type Session, StatusReason } from "../../../gen/staragent/v1/session_pb.js";
import { SessionService } from "../../../gen/staragent/v1/session_service_pb.js";
import { runCli, type ServerProcess, startServerProcess } from "../../../test/support/servers.js";
import { createTestTmux, type TestTmux } from "../../../test/support/tmux.js";
import { waitFor } from "../../../test/support/wait.js";
import { bearerInterceptor } from "../../common/bearer.js";
import { WHOLE_FIRST_READ_BYTES } from "../agents/usage/totals-follower.js";

const STAND_INS = join(import.meta.dirname, "../../../test/stand-ins");
const TOKEN = "usage-flow-token";
const NAME = "nodes/local/sessions/agent";

/** A real Hub over a private tmux server, with one stand-in CLI session in a temporary home. */
describe("Session.usage from the stand-ins' logs through a real Hub", () => {
  let tmux: TestTmux | undefined;
  let hub: ServerProcess | undefined;
  let dir: string | undefined;

  afterEach(async () => {
    await hub?.stop();
    await tmux?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
    hub = undefined;
    tmux = undefined;
    dir = undefined;
  });

  async function start(cli: string) {
    dir = await mkdtemp(join(tmpdir(), `sa-usage-${cli}-`));
    const home = join(dir, "user");
    const project = join(dir, "proj");
    const hubHome = join(dir, "hub");
    await Promise.all([mkdir(home), mkdir(project), mkdir(hubHome)]);
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, PATH: `${STAND_INS}:${process.env.PATH}` };
    delete env.CLAUDE_CONFIG_DIR;
    delete env.CODEX_HOME;
    const t = createTestTmux(env);
    tmux = t;
    hub = await startServerProcess({ kind: "hub", tmuxSocket: t.socketName, token: TOKEN, home: hubHome, env });
    const client = createClient(
      SessionService,
      createGrpcTransport({ baseUrl: hub.url, interceptors: [bearerInterceptor(TOKEN)] }),
    );
    await client.createSession({ parent: "nodes/local", sessionId: "agent", cwd: project, command: [cli] });
    const get = async (): Promise<Session> => {
      const res = await client.getSession({ name: NAME });
      if (!res.session) throw new Error("GetSession returned no session");
      return res.session;
    };
    const turn = async (text: string, done: (s: Session) => boolean, what: string) => {
      await t.run("send-keys", "-t", "=agent:", "-l", text);
      await t.run("send-keys", "-t", "=agent:", "Enter");
      return waitFor(async () => {
        const s = await get();
        return done(s) && s;
      }, what);
    };
    return { get, turn, home, hubHome, env, t };
  }

  it("claude: no usage before the first reply; after two turns the transcript's figures; a hit limit in the status detail", async () => {
    const { get, turn } = await start("claude");
    await waitFor(async () => (await get()).statusReason === StatusReason.NO_TURN, "a fresh session");
    expect((await get()).usage).toBeUndefined();
    await turn("first", (s) => s.statusReason === StatusReason.UNSEEN_COMPLETION, "the first turn");
    // Each stand-in reply: 4 in, 1000 cache read, 12 out (test/stand-ins/lib/claude.mjs).
    const two = await turn("second", (s) => s.usage?.totalOutputTokens === 24n, "the second turn's usage");
    expect(two.usage).toMatchObject({
      model: "claude-opus-4-6",
      contextTokens: 1004n,
      contextWindow: 200_000n,
      contextWindowSource: ContextWindowSource.TABLE,
      totalInputTokens: 2008n,
      totalCachedTokens: 2000n,
      totalOutputTokens: 24n,
      lastTurnTokens: 1016n,
      limitReached: false,
    });
    expect(two.usage?.costUsd).toBeUndefined();
    const cliEnv = { ...process.env, STARAGENT_URL: hub?.url, STARAGENT_AUTH_TOKEN: TOKEN };
    const ls = await runCli(["ls"], cliEnv);
    expect(
      ls.stdout
        .split("\n")
        .find((l) => l.startsWith("agent "))
        ?.split(/ {2,}/)[4],
    ).toBe("1%");
    const usage = await runCli(["usage", "agent"], cliEnv);
    expect(usage.code).toBe(0);
    expect(usage.stdout).toMatch(/^model\s+claude-opus-4-6$/m);
    expect(usage.stdout).toMatch(/^context\s+1.0k of 200k \(1%, window from StarAgent's table\)$/m);
    const json = JSON.parse((await runCli(["usage", "agent", "--json"], cliEnv)).stdout) as Record<string, unknown>;
    expect(json).toMatchObject({ model: "claude-opus-4-6", totalOutputTokens: "24" });
    const limited = await turn("limit", (s) => s.usage?.limitReached === true, "the hit limit");
    expect(limited.usage?.limitResetsText).toBe("3pm (UTC)");
    expect(limited.statusDetail.startsWith("usage limit reached, resets 3pm (UTC); ")).toBe(true);
  });

  it("claude, a transcript past WHOLE_FIRST_READ_BYTES seen by a new Hub: first pending totals, then the whole count, at once to a watcher", async () => {
    const { turn, home, hubHome, env, t } = await start("claude");
    await turn("first", (s) => s.statusReason === StatusReason.UNSEEN_COMPLETION, "the first turn");
    await turn("second", (s) => s.usage?.totalOutputTokens === 24n, "the second turn's usage");
    // The transcript grows past the whole-read size (records no reader counts), then a new Hub sees it.
    const projects = join(home, ".claude", "projects");
    const file = (await readdir(projects, { recursive: true })).find((f) => f.endsWith(".jsonl"));
    if (!file) throw new Error("no transcript");
    const padding = `${JSON.stringify({ type: "file-history-snapshot", snapshot: { note: "x".repeat(64 * 1024) } })}\n`;
    await appendFile(join(projects, file), padding.repeat(Math.ceil((WHOLE_FIRST_READ_BYTES + 1) / padding.length)));
    await hub?.stop();
    hub = await startServerProcess({ kind: "hub", tmuxSocket: t.socketName, token: TOKEN, home: hubHome, env });
    const client = createClient(
      SessionService,
      createGrpcTransport({ baseUrl: hub.url, interceptors: [bearerInterceptor(TOKEN)] }),
    );
    const stop = new AbortController();
    const seen: { pending: boolean; output: bigint }[] = [];
    try {
      const stream = client.watchSessions({ parent: "nodes/local" }, { signal: stop.signal });
      // Nothing changes after the snapshot: the counted totals must still come (the pending reading is
      // not reused as a settled one, which would hold it for SETTLED_RECHECK_MS).
      for await (const event of stream) {
        const mine = event.sessions.find((s) => s.name === NAME);
        if (mine?.usage) seen.push({ pending: mine.usage.totalsPending, output: mine.usage.totalOutputTokens });
        if (mine?.usage && !mine.usage.totalsPending) break;
      }
    } finally {
      stop.abort();
    }
    expect(seen[0]).toEqual({ pending: true, output: 0n });
    expect(seen.at(-1)).toEqual({ pending: false, output: 24n });
  }, 20_000);

  it("codex: cumulative totals, the log's context window, effort and the plan's rate limits", async () => {
    const { turn } = await start("codex");
    await turn("first", (s) => s.usage?.totalInputTokens === 1200n, "the first turn's usage");
    const two = await turn("second", (s) => s.usage?.totalInputTokens === 2400n, "the second turn's usage");
    expect(two.usage).toMatchObject({
      reasoningEffort: "medium",
      contextTokens: 1200n,
      contextWindow: 258_400n,
      contextWindowSource: ContextWindowSource.LOG,
      totalOutputTokens: 80n,
      totalCachedTokens: 2000n,
      totalReasoningTokens: 16n,
      lastTurnTokens: 1240n,
    });
    expect(two.usage?.model).toBe("gpt-5.5");
    expect(two.usage?.rateLimits.map((r) => [r.name, r.usedPercent, Number(r.windowMinutes)])).toEqual([
      ["5h", 20, 300],
      ["weekly", 4, 10_080],
    ]);
    expect(two.usage?.rateLimits[0]?.resetsTime).toBeDefined();
  });
});
