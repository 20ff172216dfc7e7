import { mkdir, mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { describe, expect, it } from "vitest";
import { type Session, SessionStatus, StatusReason } from "../../../gen/staragent/v1/session_pb.js";
import { SessionService } from "../../../gen/staragent/v1/session_service_pb.js";
import { type ServerProcess, startServerProcess } from "../../../test/support/servers.js";
import { createTestTmux, type TestTmux } from "../../../test/support/tmux.js";
import { waitFor } from "../../../test/support/wait.js";
import { CLI_TABLE } from "../../../web/src/state/cli-table.js";
import { bearerInterceptor } from "../../common/bearer.js";
import { createBuiltInAgents } from "../agents/registry.js";
import { SCREEN_ACTIVE_MS, SCREEN_STARTUP_MS } from "../agents/screen-only.js";

const STAND_IN = join(import.meta.dirname, "../../../test/stand-ins/screen-only-cli");
const TOKEN = "screen-only-token";

function label(s: Session): string {
  return `${SessionStatus[s.status]}/${StatusReason[s.statusReason]}`;
}

/**
 * The agent modules with no reader of a native log (docs/status.md, "Screen-only CLIs"), each started
 * from its New session preset's program name: the stand-in linked under that name.
 */
const SCREEN_ONLY = createBuiltInAgents()
  .modules.filter((m) => m.scope === "tree" && m.history === undefined)
  .map((m) => [m.name, m.cli, CLI_TABLE[m.cli].presets[0]?.argv[0] ?? ""] as const);

describe("screen-only CLIs through a real Hub", () => {
  it("has some: Cursor agent and Antigravity are recognised without a log reader", () => {
    expect(SCREEN_ONLY.length).toBeGreaterThan(0);
    for (const [name, , program] of SCREEN_ONLY) expect(program, name).not.toBe("");
  });

  it.concurrent.for(SCREEN_ONLY)(
    "%s: start-up drawing is no turn; printing is working, then an unseen completion until marked seen",
    { timeout: 60_000 },
    async ([name, cli, program], { onTestFinished }) => {
      const dir = await mkdtemp(join(tmpdir(), `sa-screen-only-${name}-`));
      const bin = join(dir, "bin");
      await Promise.all([mkdir(bin), mkdir(join(dir, "hub")), mkdir(join(dir, "proj"))]);
      await symlink(STAND_IN, join(bin, program));
      const env: NodeJS.ProcessEnv = { ...process.env, HOME: dir, PATH: `${bin}:${process.env.PATH}` };
      const tmux: TestTmux = createTestTmux(env);
      let hub: ServerProcess | undefined;
      onTestFinished(async () => {
        await hub?.stop();
        await tmux.close();
        await rm(dir, { recursive: true, force: true });
      });
      hub = await startServerProcess({
        kind: "hub",
        tmuxSocket: tmux.socketName,
        token: TOKEN,
        home: join(dir, "hub"),
        env,
      });
      const client = createClient(
        SessionService,
        createGrpcTransport({ baseUrl: hub.url, interceptors: [bearerInterceptor(TOKEN)] }),
      );
      const sessionName = "nodes/local/sessions/agent";
      const startedAt = Date.now();
      await client.createSession({
        parent: "nodes/local",
        sessionId: "agent",
        cwd: join(dir, "proj"),
        command: [program],
      });
      const get = async (): Promise<Session> => {
        const session = (await client.getSession({ name: sessionName })).session;
        if (!session) throw new Error("GetSession returned no session");
        return session;
      };

      const fresh = await waitFor(async () => {
        const s = await get();
        return s.cli === cli && s;
      }, `${name} recognised`);
      expect(label(fresh)).toBe("IDLE/NO_TURN");
      expect(fresh.statusDetail).toMatch(/^screen only \(no reader of .+'s logs\): nothing printed since it started$/);

      // What it printed on starting is behind it once the start-up time has passed.
      await new Promise((resolve) => setTimeout(resolve, startedAt + SCREEN_STARTUP_MS + 1_000 - Date.now()));
      expect(label(await get())).toBe("IDLE/NO_TURN");

      await tmux.run("send-keys", "-t", "=agent:", "-l", "write the parser");
      await tmux.run("send-keys", "-t", "=agent:", "Enter");
      const working = await waitFor(async () => {
        const s = await get();
        return s.status === SessionStatus.WORKING && s;
      }, `${name} working while it prints`);
      expect(label(working)).toBe("WORKING/ACTIVE_TURN");
      expect(working.statusDetail).toContain("printing");

      const done = await waitFor(
        async () => {
          const s = await get();
          return s.statusReason === StatusReason.UNSEEN_COMPLETION && s;
        },
        `${name}'s turn ended once its screen was quiet`,
        SCREEN_ACTIVE_MS + 10_000,
      );
      expect(label(done)).toBe("REVIEW/UNSEEN_COMPLETION");
      expect(done.statusDetail).toContain("quiet for");
      expect(done.completionId).toMatch(/^screen:/);

      await client.markSessionSeen({ name: sessionName, completionId: done.completionId });
      const seen = await get();
      expect(label(seen)).toBe("IDLE/SEEN_COMPLETION");
    },
  );
});
