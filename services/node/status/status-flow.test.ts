import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterEach, describe, expect, it } from "vitest";
import { type Session, SessionOrigin, SessionStatus, StatusReason } from "../../../gen/staragent/v1/session_pb.js";
import { SessionService } from "../../../gen/staragent/v1/session_service_pb.js";
import { standIns } from "../../../test/support/agent-fixture-setup.js";
import { type ServerProcess, startServerProcess } from "../../../test/support/servers.js";
import { createTestTmux, type TestTmux } from "../../../test/support/tmux.js";
import { waitFor } from "../../../test/support/wait.js";
import { bearerInterceptor } from "../../common/bearer.js";
import { createBuiltInAgents } from "../agents/registry.js";

const STAND_INS = join(import.meta.dirname, "../../../test/stand-ins");
const AGENTS = join(import.meta.dirname, "../agents");
const TOKEN = "status-flow-token";

/** The states a session passes through, as `status/reason`. */
function label(s: Session | undefined): string {
  return s ? `${SessionStatus[s.status]}/${StatusReason[s.statusReason]}` : "missing";
}

/** Every module of the registry whose fixture setup names a stand-in (`test/stand-ins/<command>`). */
const STAND_IN_CLIS = await standIns(
  AGENTS,
  createBuiltInAgents().modules.map((m) => m.name),
);

describe.each(STAND_IN_CLIS.map((s) => [s.command, s] as const))(
  "status of the %s stand-in through a real Hub",
  (cli, standIn) => {
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

    it("goes fresh → approval (a prompt beats the active turn) → working → interrupted → completed → seen, also after a Hub restart", async () => {
      dir = await mkdtemp(join(tmpdir(), `sa-status-${cli}-`));
      const home = join(dir, "user");
      const project = join(dir, "proj");
      const hubHome = join(dir, "hub");
      await Promise.all([mkdir(home), mkdir(project), mkdir(hubHome)]);
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        HOME: home,
        PATH: `${STAND_INS}:${process.env.PATH}`,
        STANDIN_TURN_MS: "600",
      };
      for (const name of standIn.unsetEnv) delete env[name];
      const t = createTestTmux(env);
      tmux = t;
      const start = () =>
        startServerProcess({ kind: "hub", tmuxSocket: t.socketName, token: TOKEN, home: hubHome, env });
      hub = await start();
      let client = connect(hub.url);
      const name = "nodes/local/sessions/agent";
      await client.createSession({ parent: "nodes/local", sessionId: "agent", cwd: project, command: [cli] });
      const get = async (): Promise<Session> => {
        const res = await client.getSession({ name });
        if (!res.session) throw new Error("GetSession returned no session");
        return res.session;
      };
      const typeLine = async (text: string) => {
        await t.run("send-keys", "-t", "=agent:", "-l", text);
        await t.run("send-keys", "-t", "=agent:", "Enter");
      };

      expect(
        label(
          await waitFor(async () => {
            const s = await get();
            return s.statusReason === StatusReason.NO_TURN && s;
          }, "a fresh session"),
        ),
      ).toBe("IDLE/NO_TURN");

      await typeLine("please approve this long");
      const asking = await waitFor(async () => {
        const s = await get();
        return s.statusReason === StatusReason.INPUT_PROMPT && s;
      }, "the approval prompt");
      expect(label(asking)).toBe("REVIEW/INPUT_PROMPT");
      expect(asking.prompt).not.toBe("");

      await t.run("send-keys", "-t", "=agent:", "y");
      const working = await waitFor(async () => {
        const s = await get();
        return s.status === SessionStatus.WORKING && s;
      }, "working after approval");
      expect(label(working)).toBe("WORKING/ACTIVE_TURN");

      await t.run("send-keys", "-t", "=agent:", "Escape");
      const interrupted = await waitFor(async () => {
        const s = await get();
        return s.statusReason === StatusReason.INTERRUPTED && s;
      }, "interrupted");
      expect(label(interrupted)).toBe("IDLE/INTERRUPTED");

      await typeLine("hello");
      const done = await waitFor(async () => {
        const s = await get();
        return s.statusReason === StatusReason.UNSEEN_COMPLETION && s;
      }, "a completed turn");
      expect(label(done)).toBe("REVIEW/UNSEEN_COMPLETION");
      expect(done.completionId).not.toBe("");
      expect(done.origin).toBe(SessionOrigin.CREATED);

      await client.markSessionSeen({ name, completionId: done.completionId });
      const seen = await get();
      expect(seen.statusDetail).toContain(standIn.stateWord);
      expect(label(seen)).toBe("IDLE/SEEN_COMPLETION");
      expect(seen.completionId).toBe(done.completionId);

      await hub.stop();
      hub = await start();
      client = connect(hub.url);
      const after = await get();
      expect(label(after)).toBe("IDLE/SEEN_COMPLETION");
      expect(after.completionId).toBe(done.completionId);
    });
  },
);

function connect(url: string) {
  const transport = createGrpcTransport({
    baseUrl: url,
    interceptors: [bearerInterceptor(TOKEN)],
  });
  return createClient(SessionService, transport);
}
