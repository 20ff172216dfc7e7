import { mkdir, mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Cli, SessionStatus } from "../../gen/staragent/v1/session_pb.js";
import { type HubFixture, startHubFixture } from "../foundation/hub-fixture.js";
import { standInEnv } from "../support/stand-in-env.js";
import { waitFor } from "../support/wait.js";

/**
 * Session.reply_excerpt for opencode: the last line of the finished turn's reply, read from
 * opencode's SQLite database as claude's and codex's are read from their logs. Through a real Hub
 * process on a private tmux server, with the opencode stand-in.
 */
describe("opencode's reply excerpt", () => {
  let f: HubFixture;
  let home: string;

  beforeAll(async () => {
    home = await realpath(await mkdtemp(join(tmpdir(), "sa-opencode-reply-")));
    await mkdir(join(home, "user"));
    f = await startHubFixture({ env: standInEnv(join(home, "user")) });
  });
  afterAll(async () => {
    await f?.close();
    await rm(home, { recursive: true, force: true });
  });

  it("is the last line of the reply once the turn is done, and empty while the next one runs", async () => {
    const name = "nodes/local/sessions/oc";
    await f.sessions.createSession({ parent: "nodes/local", sessionId: "oc", cwd: f.dir, command: ["opencode"] });
    await waitFor(async () => (await f.sessions.getSession({ name })).session?.cli === Cli.OPENCODE, "opencode seen");
    await f.sessions.sendChatMessage({ name, text: "multiline please" });
    const done = await waitFor(async () => {
      const s = (await f.sessions.getSession({ name })).session;
      return s?.status === SessionStatus.REVIEW && s;
    }, "the turn finished");
    expect(done.replyExcerpt).toBe("Done: multiline please");
    const listed = (await f.sessions.listSessions({ parent: "nodes/local" })).sessions.find(
      (s) => s.tmuxSession === "oc",
    );
    expect(listed?.replyExcerpt).toBe("Done: multiline please");

    await f.sessions.sendChatMessage({ name, text: "long" });
    const working = await waitFor(async () => {
      const s = (await f.sessions.getSession({ name })).session;
      return s?.status === SessionStatus.WORKING && s;
    }, "the next turn running");
    expect(working.replyExcerpt).toBe("");
  });
});
