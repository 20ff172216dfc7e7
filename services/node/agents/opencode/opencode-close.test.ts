import { mkdir, mkdtemp, readdir, readlink, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { StatusReason } from "../../../../gen/staragent/v1/session_pb.js";
import { GetChatRequestSchema } from "../../../../gen/staragent/v1/session_service_pb.js";
import { createTestTmux, type TestTmux } from "../../../../test/support/tmux.js";
import { waitFor } from "../../../../test/support/wait.js";
import { createLogger } from "../../../common/log.js";
import { createMachine } from "../../create-machine.js";
import type { Machine } from "../../machine.js";

const STAND_INS = join(import.meta.dirname, "../../../../test/stand-ins");

/** How many of this process's open files are `path` or its WAL and shared-memory files. */
async function openHandles(path: string): Promise<number> {
  let count = 0;
  for (const fd of await readdir("/proc/self/fd")) {
    const target = await readlink(`/proc/self/fd/${fd}`).catch(() => "");
    if (target === path || target === `${path}-wal` || target === `${path}-shm`) count++;
  }
  return count;
}

describe("opencode's database on shutdown", () => {
  let tmux: TestTmux | undefined;
  let machine: Machine | undefined;
  let dir: string | undefined;

  afterEach(async () => {
    await machine?.close();
    await tmux?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
    machine = undefined;
    tmux = undefined;
    dir = undefined;
  });

  it("is open while status and chat read it, and closed once the machine stops", async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), "sa-opencode-close-")));
    const home = join(dir, "user");
    const project = join(dir, "proj");
    await Promise.all([mkdir(home), mkdir(project), mkdir(join(dir, "staragent"))]);
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, PATH: `${STAND_INS}:${process.env.PATH}` };
    delete env.XDG_DATA_HOME;
    const t = createTestTmux(env);
    tmux = t;
    const log = createLogger("test", "error");
    const m = createMachine({ nodeName: "n1", home: join(dir, "staragent"), tmuxSocket: t.socketName, env, log });
    machine = m.sessions;
    await m.sessions.createSession({ sessionId: "oc", cwd: project, command: ["opencode"] });
    await waitFor(async () => (await m.sessions.getSession("oc")).statusReason === StatusReason.NO_TURN, "opencode up");
    await t.run("send-keys", "-t", "=oc:", "-l", "hello");
    await t.run("send-keys", "-t", "=oc:", "Enter");
    await waitFor(
      async () => (await m.sessions.getSession("oc")).statusReason === StatusReason.UNSEEN_COMPLETION,
      "a completed turn",
    );
    const chat = await m.chat.getChat("oc", create(GetChatRequestSchema, { name: "nodes/n1/sessions/oc" }));
    expect(chat.sourceDetail).toContain("opencode.db");
    const db = join(home, ".local", "share", "opencode", "opencode.db");
    // One connection for the status reads, one for the chat history.
    expect(await openHandles(db)).toBeGreaterThanOrEqual(2);

    await m.sessions.close();
    expect(await openHandles(db)).toBe(0);
  });
});
