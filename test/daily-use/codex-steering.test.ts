import { mkdir, mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionStatus } from "../../gen/staragent/v1/session_pb.js";
import { type HubFixture, startHubFixture } from "../foundation/hub-fixture.js";
import { REPO_ROOT } from "../support/servers.js";
import { waitFor } from "../support/wait.js";

const STAND_INS = join(REPO_ROOT, "test/stand-ins");
/** The claude stand-in's footer once it takes input. */
const CLAUDE_READY = "? for shortcuts";
/** SendChatMessage's answer for a follow-up Claude Code queued behind its running turn. */
const QUEUED =
  "claude queued it behind the running turn (its native log shows it queued); it is taken up when that turn ends";

/**
 * A follow-up sent while Codex works is steered into the running turn by Codex (0.17x records it in
 * that turn, under the same `turn_id`): SendChatMessage confirms it and says so, instead of "the CLI
 * did not confirm it". Through a real Hub process with the codex stand-in, which records a steered
 * follow-up as the real 0.171.0 does (test/compat/codex-driver.ts checks the real one). Claude Code
 * 2.1.332 queues such a message until the turn ends and logs it queued (`queue-operation`; the claude
 * stand-in does the same, test/compat/claude-driver.ts checks the real one): confirmed as queued. A
 * CLI that holds it without a record is not confirmed within the wait: the answer says it was typed
 * while the agent worked, not merely that the CLI did not confirm.
 */
describe("a follow-up typed during a turn: Codex steers it, Claude Code queues it", () => {
  let f: HubFixture;
  let home: string;
  beforeAll(async () => {
    home = await realpath(await mkdtemp(join(tmpdir(), "sa-steer-")));
    await mkdir(join(home, "user"));
    f = await startHubFixture({
      env: {
        ...process.env,
        HOME: join(home, "user"),
        PATH: `${STAND_INS}:${process.env.PATH}`,
        STANDIN_THINK_MS: "50",
        STANDIN_TURN_MS: "200",
        CODEX_HOME: "",
      },
    });
  });
  afterAll(async () => {
    await f?.close();
    await rm(home, { recursive: true, force: true });
  });

  /** Starts `command` in session `id` and waits for its input on screen; the session's resource name. */
  const startAgent = async (id: string, command: readonly string[], ready: string) => {
    await f.sessions.createSession({ parent: "nodes/local", sessionId: id, cwd: f.dir, command: [...command] });
    await waitFor(
      async () => (await f.tmux.run("capture-pane", "-p", "-t", `=${id}:`)).includes(ready),
      `the ${command.join(" ")} stand-in's input`,
    );
    return `nodes/local/sessions/${id}`;
  };
  const working = (name: string) =>
    waitFor(
      async () => (await f.sessions.getSession({ name })).session?.status === SessionStatus.WORKING,
      "the turn to run",
    );
  const inChat = (name: string, text: string) =>
    waitFor(
      async () => (await f.sessions.getChat({ name })).messages.some((m) => m.text === text),
      `"${text}" in the chat`,
    );

  it("confirms a follow-up typed during a turn, saying Codex steered it into that turn", async () => {
    const name = await startAgent("steered", ["codex"], "Ask Codex to do anything");
    const first = await f.sessions.sendChatMessage({ name, text: "work long on this" });
    expect(first).toMatchObject({ confirmed: true, confirmationDetail: "codex native log shows the new user turn" });
    await working(name);
    const followUp = await f.sessions.sendChatMessage({ name, text: "also check the tests" });
    expect(followUp).toMatchObject({
      confirmed: true,
      confirmationDetail: "codex steered it into the running turn (its native log shows it in that turn)",
    });
    // Still the one turn, and the follow-up is in the chat.
    expect((await f.sessions.getSession({ name })).session?.status).toBe(SessionStatus.WORKING);
    await inChat(name, "also check the tests");
  });

  it("confirms a follow-up typed during a Claude Code turn as queued behind it, which runs once the turn ends", async () => {
    const name = await startAgent("queued", ["claude"], CLAUDE_READY);
    // A long turn: the stand-in, as Claude Code 2.1.332 does, queues the follow-up and logs it queued.
    await f.sessions.sendChatMessage({ name, text: "long work" });
    await working(name);
    const followUp = await f.sessions.sendChatMessage({ name, text: "and then the docs" });
    expect(followUp).toMatchObject({
      confirmed: true,
      confirmationDetail: QUEUED,
    });
    // Interrupted, the turn ends and the queued follow-up runs as the next turn.
    await f.tmux.run("send-keys", "-t", "=queued:", "Escape");
    await inChat(name, "and then the docs");
    await f.sessions.stopSession({ name });
  });

  it("does not take a turn typed earlier and logged late for the follow-up: that follow-up is queued", async () => {
    // Claude Code buffers its transcript writes: the prompt of the turn now running can reach the log
    // after a follow-up is typed. The stand-in writes its lines 1.5 s late here.
    const id = "logged-late";
    const name = await startAgent(id, ["env", "STANDIN_LOG_LAG_MS=1500", "claude"], CLAUDE_READY);
    // The turn starts from the keyboard; the follow-up is sent while its prompt is not in the log yet.
    await f.tmux.run("send-keys", "-t", `=${id}:`, "-l", "long work from the keyboard");
    await f.tmux.run("send-keys", "-t", `=${id}:`, "Enter");
    await working(name);
    const followUp = await f.sessions.sendChatMessage({ name, text: "and the changelog" });
    expect(followUp).toMatchObject({
      confirmed: true,
      confirmationDetail: QUEUED,
    });
    await f.tmux.run("send-keys", "-t", `=${id}:`, "Escape");
    await inChat(name, "and the changelog");
    await f.sessions.stopSession({ name });
  });

  it("says a follow-up was typed while the agent worked when the CLI holds it without logging it (Claude Code 2.0)", async () => {
    const id = "held";
    const name = await startAgent(id, ["env", "STANDIN_VERSION=2.0.76", "claude"], CLAUDE_READY);
    await f.sessions.sendChatMessage({ name, text: "long work" });
    await working(name);
    const followUp = await f.sessions.sendChatMessage({ name, text: "and then the docs" });
    expect(followUp).toMatchObject({
      confirmed: false,
      confirmationDetail:
        "typed while claude was working on a turn; its native log showed no new user turn within 5 s (a CLI that holds a message typed during a turn takes it up when that turn ends, and the chat shows it then)",
    });
    await f.tmux.run("send-keys", "-t", `=${id}:`, "Escape");
    await inChat(name, "and then the docs");
    await f.sessions.stopSession({ name });
  });
});
