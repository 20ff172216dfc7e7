import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterEach, describe, expect, it } from "vitest";
import { type Session, SessionStatus, StatusReason } from "../../../gen/staragent/v1/session_pb.js";
import { SessionService } from "../../../gen/staragent/v1/session_service_pb.js";
import { standIns } from "../../../test/support/agent-fixture-setup.js";
import { type ServerProcess, startServerProcess } from "../../../test/support/servers.js";
import { createTestTmux, type TestTmux } from "../../../test/support/tmux.js";
import { waitFor } from "../../../test/support/wait.js";
import { bearerInterceptor } from "../../common/bearer.js";
import { createBuiltInAgents } from "../agents/registry.js";

const STAND_INS = join(import.meta.dirname, "../../../test/stand-ins");
const TOKEN = "shared-folder-token";
/** The first instance "thinks" this long before any output, so Escape lands before its first reply. */
const SLOW_THINK_MS = "4000";
/** How long a change may take to show (the watch loop's goal is well under a second). */
const STATUS_TIMEOUT_MS = 15_000;
/** Each case starts a Hub and two stand-ins and runs five turns. */
const CASE_TIMEOUT_MS = 90_000;

/** `status/reason` of a session, for readable failures. */
function label(s: Session | undefined): string {
  return s ? `${SessionStatus[s.status]}/${StatusReason[s.statusReason]}` : "missing";
}

/** Every version of every stand-in the registry's modules name (`bound`: how status_detail says it bound). */
const CASES = (
  await standIns(
    join(import.meta.dirname, "../agents"),
    createBuiltInAgents().modules.map((m) => m.name),
  )
).flatMap((standIn) => standIn.versions.map((v) => ({ ...v, command: standIn.command, standIn })));

describe.each(CASES)(
  "two $title stand-ins in one folder through a real Hub",
  ({ command, version, bound, standIn }) => {
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

    it("each is bound to its own log: one's turns, interrupts (before the first reply and mid-turn) and completions never show on the other", {
      timeout: CASE_TIMEOUT_MS,
    }, async () => {
      dir = await mkdtemp(join(tmpdir(), `sa-shared-${command}-`));
      const home = join(dir, "user");
      const project = join(dir, "proj");
      await Promise.all([mkdir(home), mkdir(project)]);
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        HOME: home,
        PATH: `${STAND_INS}:${process.env.PATH}`,
        STANDIN_VERSION: version,
        STANDIN_TURN_MS: "300",
      };
      for (const name of standIn.unsetEnv) delete env[name];
      const t = createTestTmux(env);
      tmux = t;
      hub = await startServerProcess({ kind: "hub", tmuxSocket: t.socketName, token: TOKEN, env });
      const client = createClient(
        SessionService,
        createGrpcTransport({ baseUrl: hub.url, interceptors: [bearerInterceptor(TOKEN)] }),
      );
      await client.createSession({
        parent: "nodes/local",
        sessionId: "first",
        cwd: project,
        command: ["env", `STANDIN_THINK_MS=${SLOW_THINK_MS}`, command],
      });
      await client.createSession({ parent: "nodes/local", sessionId: "second", cwd: project, command: [command] });
      let last: Session[] = [];
      /** Waits until both sessions match, in one listing. */
      const both = (what: string, first: (s: Session) => boolean, second: (s: Session) => boolean) =>
        waitFor(
          async () => {
            last = (await client.listSessions({ parent: "nodes/local" })).sessions;
            const a = last.find((s) => s.tmuxSession === "first");
            const b = last.find((s) => s.tmuxSession === "second");
            return a && b && first(a) && second(b) ? { a, b } : undefined;
          },
          what,
          STATUS_TIMEOUT_MS,
        ).catch((err: Error) => {
          const seen = last.map((s) => `${s.tmuxSession}: ${label(s)} ${s.statusDetail}`).join("\n");
          throw new Error(`${err.message}\nlast ListSessions:\n${seen}`);
        });
      const is = (status: SessionStatus, reason: StatusReason) => (s: Session) =>
        s.status === status && s.statusReason === reason;
      const type = async (session: string, text: string) => {
        await t.run("send-keys", "-t", `=${session}:`, "-l", text);
        await t.run("send-keys", "-t", `=${session}:`, "Enter");
      };
      const key = (session: string, k: string) => t.run("send-keys", "-t", `=${session}:`, k);
      const idle = is(SessionStatus.IDLE, StatusReason.NO_TURN);
      const working = is(SessionStatus.WORKING, StatusReason.ACTIVE_TURN);
      const interrupted = is(SessionStatus.IDLE, StatusReason.INTERRUPTED);
      const unseen = is(SessionStatus.REVIEW, StatusReason.UNSEEN_COMPLETION);

      await both("both fresh", idle, idle);

      // Escape before the first reply: Claude Code writes nothing and puts the prompt back (Ctrl-U clears it).
      await type("first", "a first quick question");
      await both("the first working, the second idle", working, idle);
      await key("first", "Escape");
      await both("the first interrupted before its first reply", interrupted, idle);
      await key("first", "C-u");

      // Escape once the turn has produced output (a tool call): interrupted mid-turn.
      await type("first", "use a tool then take long");
      await waitFor(
        async () => (await t.run("capture-pane", "-p", "-t", "=first:")).includes("README.md"),
        "the first instance's tool call on screen",
        STATUS_TIMEOUT_MS,
      );
      await both("the first working mid-turn", working, idle);
      await key("first", "Escape");
      await both("the first interrupted mid-turn", interrupted, idle);

      await type("second", "hello from the second pane");
      const { b } = await both("the second's turn done, the first still interrupted", interrupted, unseen);
      expect(b.statusDetail).toContain(bound);

      await type("first", "another question for the first pane");
      const done = await both(
        "the first's turn done, the second's completion unchanged",
        unseen,
        (s) => unseen(s) && s.completionId === b.completionId,
      );
      expect(done.a.completionId).not.toBe("");
      expect(done.a.completionId).not.toBe(b.completionId);
      expect(done.a.statusDetail).toContain(bound);
    });
  },
);
